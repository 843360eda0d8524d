// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import Testing

/// What only PostgreSQL has: replicas sharing one database, and the libpq wrapper itself. The
/// suites inside share one private server; they run one test at a time because some tests hold
/// a lock on purpose and wait for a store to block on it.
@Suite(
    .postgreSQLServer, .enabled(if: PostgreSQLServer.binaries != nil, Comment(rawValue: PostgreSQLServer.unavailable)),
    .serialized, .timeLimit(.minutes(3)))
struct PostgreSQLTests {}
