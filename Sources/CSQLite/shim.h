// SPDX-License-Identifier: GPL-3.0-or-later
// libsqlite3 (Debian's), as the SQLite module sees it.
#ifndef GAEND_CSQLITE_SHIM_H
#define GAEND_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
