// SPDX-License-Identifier: GPL-3.0-or-later

@testable import KeyServer
import GaendTestSupport
import PostgreSQL
import Testing

/// What needs no server: connection strings that cannot work, and the placeholder rewriting.
@Suite(.ownThreads) struct DatabaseLocationTests {
    /// Errors name what failed and carry libpq's message, never the password.
    @Test(arguments: [
        ("postgresql://postgres:hunter2@127.0.0.1:1/keys", "Connection refused"),
        ("postgresql://postgres:hunter2@[::1/keys", "IPv6 host address"),
        ("host=127.0.0.1 port=1 password='hunter2' bogus=1", #"invalid connection option "bogus""#),
    ])
    func aBadConnectionStringIsAnErrorWithoutItsPassword(_ connectionString: String, _ expected: String) throws {
        #expect { try KeyStore(.postgreSQL(connectionString: connectionString)) } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.engine == .postgreSQL && error.code == "08001" && error.operation == "connecting to PostgreSQL" && error.message.contains(expected)
                && !error.description.contains("hunter2")
        }
    }

    @Test func passwordsAreRedactedInEveryForm() {
        let message = "quoting hunter2 and s3cr3t and p@ss w0rd and pa%20ss"
        #expect(ConnectionString.redacting(message, of: "postgresql://user:hunter2@host/db?password=s3cr3t") == "quoting *** and *** and p@ss w0rd and pa%20ss")
        #expect(ConnectionString.redacting(message, of: #"host=x password = 'p@ss w0rd'"#) == "quoting hunter2 and s3cr3t and *** and pa%20ss")
        #expect(ConnectionString.redacting(message, of: "postgres://user:pa%20ss@host/db") == "quoting hunter2 and s3cr3t and p@ss w0rd and ***")
        #expect(ConnectionString.redacting(message, of: "postgresql://user@host/db") == message)
    }

    @Test func questionMarkPlaceholdersBecomeDollarsOutsideLiterals() {
        #expect(PostgreSQLBackend.dollarPlaceholders("SELECT a FROM t WHERE b = ?1 AND c IN (?2, ?10)") == "SELECT a FROM t WHERE b = $1 AND c IN ($2, $10)")
        #expect(
            PostgreSQLBackend.dollarPlaceholders("SELECT '?1', \"?2\", 'it''s ?3', ?4 -- ?5\n, ?6 /* ?7 */")
                == "SELECT '?1', \"?2\", 'it''s ?3', $4 -- ?5\n, $6 /* ?7 */")
        #expect(PostgreSQLBackend.dollarPlaceholders("SELECT j ? 'key'") == "SELECT j ? 'key'")
    }
}
