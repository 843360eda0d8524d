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

/// Polls `condition` until it holds, for up to 30 s (a bound, not a speed: it holds at once
/// unless something is broken).
func eventually(_ what: String, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(30))
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
