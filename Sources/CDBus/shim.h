// SPDX-License-Identifier: GPL-3.0-or-later
// libdbus-1, as the DBus module sees it. DBUS_TYPE_* are macros Swift cannot import: see CGaendShims.
#ifndef GAEND_CDBUS_SHIM_H
#define GAEND_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
