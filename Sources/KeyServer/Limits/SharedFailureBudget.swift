// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL

/// The budgets of failed attempts in the PostgreSQL database the replicas share, so that N
/// replicas behind a load balancer give a client the budget one gives, whichever answers.
///
/// A bucket is a row (client, secret, units, updated), refilled by the same integer arithmetic as
/// `RateLimiter`'s, and each reservation is one statement: an upsert that refills, takes a token if
/// there is one, and says whether it did. PostgreSQL takes the row's lock for it, so two replicas
/// reserving at once for one client queue on that row and see each other's take. A wrong guess
/// thus costs one statement; a right one two (the reservation and its return).
///
/// Rows whose bucket is full again (untouched for an interval) are deleted at most once a minute,
/// so the table holds one row per client that reserved within the last interval; past
/// `maximumRows` (a flood from many addresses), clients without a row share one overflow bucket
/// until the next prune finds room, as `RateLimiter` bounds its buckets: the flood costs a bounded
/// table and slows only other newcomers, never a client already counted. Commits do not
/// wait for the disk (`synchronous_commit=off`, this connection only): a crash of the database
/// server can forget the last few hundred milliseconds of reservations, a few guesses' worth,
/// against a flush per guess. A refusal is remembered in this replica until its Retry-After, so
/// a guesser who goes on costs the database nothing more.
package actor SharedFailureBudget: FailureBudget {
    private let database: PostgreSQLBackend
    private let thread = DatabaseThread(name: "failure-budget")
    package nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    package let limit: RateLimit
    let maximumRefusals: Int
    let maximumRows: Int
    /// Whether the last prune found the table full: newcomers then share the overflow bucket.
    private var full = false
    static let overflowClient = "overflow"
    private var refusedUntil: [String: Int64] = [:]
    /// When rows were last pruned (nil: not yet by this replica).
    private var pruned: Int64?
    /// Statements run, for the figures of `gaen-bench` and for tests.
    package private(set) var statements = 0

    static let pruneInterval: Int64 = 60

    /// The table of this budget's rows: each level of `FailureLevels` (the client, its /56 and /48,
    /// the server) has its own, pruned by its own interval.
    let table: String

    /// Opens its own connection to the database at `connectionString` and creates the table.
    package init(
        connectionString: String, limit: RateLimit, table: String = "failure_budget", maximumRefusals: Int = 65_536, maximumRows: Int = 1_000_000
    ) throws(DatabaseError) {
        precondition(table.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "a table name of the program's own")
        self.table = table
        database = try PostgreSQLBackend(connectionString: connectionString, serverOptions: "-c synchronous_commit=off")
        try database.createSchema(
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                client TEXT NOT NULL,
                secret TEXT NOT NULL,
                units BIGINT NOT NULL,
                updated BIGINT NOT NULL,
                taken BOOLEAN NOT NULL,
                PRIMARY KEY (client, secret)
            )
            """)
        self.limit = limit
        self.maximumRefusals = max(1, maximumRefusals)
        self.maximumRows = max(1, maximumRows)
    }

    deinit { thread.stop() }

    var capacity: Int64 { Int64(limit.tokens) * limit.interval }

    package func reserve(_ client: String, secret: RequestLimits.Secret, now: Int64) throws -> RateLimiter.Decision {
        let key = "\(secret.rawValue) \(client)"
        if let until = refusedUntil[key] {
            if now < until { return RateLimiter.Decision(allowed: false, remaining: 0, retryAfter: until - now) }
            refusedUntil[key] = nil
        }
        try pruneIfDue(now: now)
        // ?1 client, ?2 secret, ?3 now, ?4 capacity, ?5 units per token (the interval), ?6 tokens
        // a second refilled per unit of time (the tokens): RateLimiter.refilled, in SQL.
        let refilled = "LEAST(?4, b.units + LEAST(GREATEST(0, ?3 - b.updated), ?5) * ?6)"
        let take = """
            units = \(refilled) - CASE WHEN \(refilled) >= ?5 THEN ?5 ELSE 0 END,
                taken = \(refilled) >= ?5,
                updated = GREATEST(?3, b.updated)
            """
        func parameters(_ client: String) -> [DatabaseValue] {
            [.text(client), .text(secret.rawValue), .integer(now), .integer(capacity), .integer(limit.interval), .integer(Int64(limit.tokens))]
        }
        var row: [DatabaseValue]?
        if full {
            // A client with a row keeps its own bucket; a newcomer takes from the shared one.
            statements += 1
            row = try database.query(
                "UPDATE \(table) AS b SET \(take) WHERE client = ?1 AND secret = ?2 RETURNING units, taken::int, 1", parameters(client)
            ).first
        }
        let overflowed = row == nil && full
        if row == nil {
            statements += 1
            row = try database.query(
                """
                INSERT INTO \(table) AS b (client, secret, units, updated, taken) VALUES (?1, ?2, ?4 - ?5, ?3, true)
                ON CONFLICT (client, secret) DO UPDATE SET \(take)
                RETURNING units, taken::int, (xmax <> 0)::int
                """, parameters(full ? Self.overflowClient : client)
            ).first
        }
        // Known: its own row was there before (an update, not PostgreSQL's insert, whose xmax is
        // 0); a newcomer's row, or the overflow bucket, is not.
        guard let units = row?[0].integer, let taken = row?[1].integer, let existed = row?[2].integer else {
            throw DatabaseError(engine: .postgreSQL, code: "", message: "the failure budget's upsert returned no row", operation: "reserving an attempt")
        }
        let remaining = Int(units / limit.interval)
        let known = existed == 1 && !overflowed
        guard taken == 0 else { return RateLimiter.Decision(allowed: true, remaining: remaining, retryAfter: 0, known: known) }
        // Units come back at `tokens` a second; one token is `interval` units.
        let wait = max(1, (limit.interval - units + Int64(limit.tokens) - 1) / Int64(limit.tokens))
        remember(key, until: now + wait, now: now)
        return RateLimiter.Decision(allowed: false, remaining: 0, retryAfter: wait, known: known)
    }

    /// Returns the attempt to the client's row; a client without one took from the overflow
    /// bucket while the table was full, so it goes back there.
    package func giveBack(_ client: String, secret: RequestLimits.Secret, now: Int64) throws {
        for owner in [client, Self.overflowClient] {
            statements += 1
            let returned = try database.query(
                "UPDATE \(table) SET units = LEAST(?3, units + ?4) WHERE client = ?1 AND secret = ?2 RETURNING 1",
                [.text(owner), .text(secret.rawValue), .integer(capacity), .integer(limit.interval)])
            if !returned.isEmpty { return }
        }
    }

    /// Rows full again (untouched for an interval) are what a missing row means: deleted. Then
    /// whether the rest fill the table is noted for the reservations until the next prune.
    private func pruneIfDue(now: Int64) throws {
        if let pruned, now >= pruned, now - pruned < Self.pruneInterval { return }
        pruned = now
        statements += 2
        try database.query("DELETE FROM \(table) WHERE updated <= ?1", [.integer(now - limit.interval)])
        full = try rows() >= maximumRows
    }

    /// A refusal kept until its wait ends; past `maximumRefusals` the ended ones go, and if none
    /// has, the newcomer is not kept (it then costs a statement per request, not memory).
    private func remember(_ key: String, until: Int64, now: Int64) {
        if refusedUntil.count >= maximumRefusals { refusedUntil = refusedUntil.filter { $0.value > now } }
        if refusedUntil.count < maximumRefusals { refusedUntil[key] = until }
    }

    /// Rows in the table now (tests and figures).
    package func rows() throws -> Int {
        Int(try database.query("SELECT count(*) FROM \(table)").first?.first?.integer ?? 0)
    }
}
