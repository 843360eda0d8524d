// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import PostgreSQL
import Testing

extension PostgreSQLTests {
    /// The libpq wrapper on its own: binary values both ways, errors, transactions.
    @Suite struct ConnectionTests {
        @Test func valuesRoundTripInBinary() throws {
            let connection = try PostgreSQLConnection(try PostgreSQLServer.required().url())
            let values: [PostgreSQLValue] = [
                .integer(0), .integer(-1), .integer(.min), .integer(.max), .text(""), .text("grüezi ✓"), .blob([]), .blob([0, 255, 1]), .null,
            ]
            for value in values {
                #expect(try connection.query("SELECT $1", [value]) == [[value]])
            }
            // Narrower integers are integers too; a type that is not decoded is an error naming it.
            #expect(try connection.query("SELECT 7::int2, -8::int4, 'v'::varchar") == [[.integer(7), .integer(-8), .text("v")]])
            #expect { try connection.query("SELECT 1.5::float8 AS ratio") } throws: {
                ($0 as? PostgreSQLError)?.message == "column ratio has type OID 701, which is not decoded here: cast it to bigint, text or bytea"
            }
        }

        @Test func errorsCarryTheirSQLStateAndOperationAndFailedTransactionsStoreNothing() throws {
            let connection = try PostgreSQLConnection(try PostgreSQLServer.required().url())
            try connection.execute("CREATE TEMPORARY TABLE item (id bigint PRIMARY KEY)")
            try connection.query("INSERT INTO item VALUES ($1)", [.integer(1)])
            #expect { try connection.query("INSERT INTO item VALUES ($1)", [.integer(1)]) } throws: { error in
                guard let error = error as? PostgreSQLError else { return false }
                // The primary message only: DETAIL would quote the row's values.
                return error.isUniqueViolation && error.operation == "INSERT INTO item VALUES ($1)" && !error.message.contains("(id)=(1)")
            }
            #expect { try connection.query("SELEC 1") } throws: { ($0 as? PostgreSQLError)?.sqlState == "42601" }

            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try connection.transaction {
                    try connection.query("INSERT INTO item VALUES ($1)", [.integer(2)])
                    throw Refused()
                }
            }
            // A failure the body swallows still aborts the transaction: the commit says so.
            #expect { try connection.transaction { _ = try? connection.query("INSERT INTO item VALUES ($1)", [.integer(1)]) } } throws: {
                ($0 as? PostgreSQLError)?.sqlState == "25P02"
            }
            #expect(try connection.query("SELECT count(*) FROM item") == [[.integer(1)]])
        }

        /// A server that drops the connection (a restart, an administrator) fails the statement
        /// that meets it; the next one runs on a new connection with the same settings.
        @Test func aDroppedConnectionIsOpenedAgain() throws {
            let url = try PostgreSQLServer.required().url()
            let connection = try PostgreSQLConnection(url)
            let pid = try #require(try connection.query("SELECT pg_backend_pid()").first?.first)
            // The timeout makes it wait until the backend is gone.
            #expect(try PostgreSQLConnection(url).query("SELECT pg_terminate_backend($1::int, 10000)::int", [pid]) == [[.integer(1)]])
            #expect { try connection.query("SELECT 1") } throws: {
                ($0 as? PostgreSQLError)?.isConnection == true || ($0 as? PostgreSQLError)?.sqlState == "57P01"
            }
            #expect(try connection.query("SELECT 1") == [[.integer(1)]])
            #expect(try connection.query("SHOW client_min_messages") == [[.text("warning")]])
        }
    }
}
