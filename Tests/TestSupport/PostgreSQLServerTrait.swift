// SPDX-License-Identifier: GPL-3.0-or-later

package import Testing

extension PostgreSQLServer {
    /// The server of the suite being run, when it has the `.postgreSQLServer` trait and the
    /// binaries are there.
    @TaskLocal package static var current: PostgreSQLServer?

    /// The server of the suite being run, or an error saying the suite lacks the trait.
    package static func required() throws -> PostgreSQLServer {
        guard let current else { throw ToolRunnerError(message: "no PostgreSQL server: give the suite the .postgreSQLServer trait") }
        return current
    }
}

/// Runs a suite beside a private PostgreSQL server (`PostgreSQLServer.current`), started before
/// its first test and stopped after its last, whatever happened in between. Without the
/// binaries (and without GAEND_POSTGRES_BIN) the suite runs with no server, so its SQLite cases
/// still run; with GAEND_POSTGRES_BIN set, a server that cannot start fails the suite.
package struct PostgreSQLServerTrait: SuiteTrait, TestScoping {
    package var isRecursive: Bool { false }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // initdb and pg_ctl are waited for, and so are the suite's tools: its own threads (see
        // OwnThreadsTrait), so that none of this holds the cooperative pool.
        try await withTaskExecutorPreference(ElasticExecutor()) {
            guard PostgreSQLServer.binaries != nil else { return try await function() }
            let server = try PostgreSQLServer()
            defer { server.stop() }
            try await PostgreSQLServer.$current.withValue(server) { try await function() }
        }
    }
}

extension Trait where Self == PostgreSQLServerTrait {
    /// A private PostgreSQL server for the suite.
    package static var postgreSQLServer: Self { PostgreSQLServerTrait() }
}
