// SPDX-License-Identifier: GPL-3.0-or-later
// libpq (Debian's libpq-dev), as the PostgreSQL module sees it.
#ifndef GAEND_CPOSTGRESQL_SHIM_H
#define GAEND_CPOSTGRESQL_SHIM_H
#include <libpq-fe.h>

// PQresultErrorField's field codes are character-literal macros ('C', 'M'), which Swift does not
// import: the same values as constants.
static const int cgaend_pg_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int cgaend_pg_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;
#endif
