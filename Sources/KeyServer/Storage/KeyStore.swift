// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
package import ENCore
import Foundation

/// The key server's published keys, in SQLite (one file, nothing to set up) or PostgreSQL (one
/// database for several replicas). One actor owns the connection; each publish is one
/// transaction, so a refused request stores nothing.
///
/// Revision follows the reference server: a publish returns a token naming its keys; a later
/// publish of the same keys (a likely diagnosis confirmed, or revoked) must present it, and a key
/// is revised once at most.
package actor KeyStore {
    let database: any Database
    /// Every statement blocks: the store runs on a thread of its own, not the cooperative pool.
    private let thread = DatabaseThread(name: "key-store")

    package nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// Opens the store's tables at `location`, creating them if needed.
    /// - Throws: `DatabaseError` naming what failed: the file or the connection, or the schema.
    package init(_ location: DatabaseLocation) throws(DatabaseError) {
        database = try location.open()
        try database.createSchema(Self.schema(database.engine.types))
        if database.engine == .sqlite { try Self.renameEndColumn(database) }
        try Self.addRevisionColumns(database)
    }

    deinit { thread.stop() }

    /// Opens the store in the SQLite file at `path`.
    package init(path: String) throws(DatabaseError) {
        try self.init(.sqlite(path: path))
    }

    static func schema(_ types: ColumnTypes) -> String {
        """
        CREATE TABLE IF NOT EXISTS exposure (
            key \(types.blob) PRIMARY KEY CHECK (length(key) = 16),
            rolling_start \(types.integer) NOT NULL,
            rolling_period \(types.integer) NOT NULL CHECK (rolling_period BETWEEN 1 AND 144),
            transmission_risk \(types.integer) NOT NULL CHECK (transmission_risk BETWEEN 0 AND 8),
            report_type \(types.integer) NOT NULL,
            days_since_onset \(types.integer),
            health_authority TEXT NOT NULL,
            traveler \(types.integer) NOT NULL DEFAULT 0,
            export_after \(types.integer) NOT NULL,
            created \(types.integer) NOT NULL,
            revised_report_type \(types.integer),
            revised_at \(types.integer),
            revised_days_since_onset \(types.integer),
            revised_transmission_risk \(types.integer),
            exported_batch \(types.integer),
            revision_exported_batch \(types.integer)
        );
        CREATE TABLE IF NOT EXISTS export_batch (
            id \(types.identity),
            start \(types.integer) NOT NULL,
            end_time \(types.integer) NOT NULL,
            name TEXT NOT NULL UNIQUE,
            keys \(types.integer) NOT NULL,
            created \(types.integer) NOT NULL
        );
        CREATE TABLE IF NOT EXISTS export_file (
            name TEXT PRIMARY KEY,
            data \(types.blob) NOT NULL,
            etag TEXT NOT NULL,
            created \(types.integer) NOT NULL
        );
        CREATE INDEX IF NOT EXISTS exposure_export_after ON exposure (export_after);
        CREATE TABLE IF NOT EXISTS revision_token (
            token TEXT PRIMARY KEY,
            created \(types.integer) NOT NULL
        );
        CREATE TABLE IF NOT EXISTS revision_token_key (
            token TEXT NOT NULL REFERENCES revision_token (token) ON DELETE CASCADE,
            key \(types.blob) NOT NULL,
            PRIMARY KEY (token, key)
        );
        """
    }

    /// Files made before PostgreSQL support named `export_batch.end_time` `end`, which
    /// PostgreSQL reserves.
    static func renameEndColumn(_ database: any Database) throws(DatabaseError) {
        guard try !database.query("SELECT 1 FROM pragma_table_info('export_batch') WHERE name = 'end'").isEmpty else { return }
        try database.execute(#"ALTER TABLE export_batch RENAME COLUMN "end" TO end_time"#)
    }

    /// Stores made before revisions kept their own days since onset and transmission risk get
    /// those columns (empty: such a revision is exported with the key's first values).
    static func addRevisionColumns(_ database: any Database) throws(DatabaseError) {
        for column in ["revised_days_since_onset", "revised_transmission_risk"] {
            let type = database.engine.types.integer
            switch database.engine {
            case .sqlite:
                guard try database.query("SELECT 1 FROM pragma_table_info('exposure') WHERE name = ?1", [.text(column)]).isEmpty else { continue }
                try database.execute("ALTER TABLE exposure ADD COLUMN \(column) \(type)")
            case .postgreSQL:
                try database.createSchema("ALTER TABLE exposure ADD COLUMN IF NOT EXISTS \(column) \(type)")
            }
        }
    }

    /// What a publish stored.
    package struct Published: Sendable, Equatable {
        package var inserted: Int
        package var revised: Int
        package var revisionToken: String
    }

    /// Stores the accepted keys of one publish with `reportType` (1 confirmed, 2 clinical/likely,
    /// 3 self-report, 5 revoked). A key seen before is revised as the reference's `Exposure.Revise`
    /// (internal/publish/model/exposure_model.go); a new key of a negative test is not stored,
    /// since only a revision can revoke.
    package func publish(
        _ keys: [PublishValidator.AcceptedKey], reportType: Int32, healthAuthority: String, traveler: Bool, revisionToken: String?, now: UnixTime
    ) throws(PublishError) -> Published {
        // On PostgreSQL another replica may store one of these keys between this look and this
        // insert. The insert then waits for that replica's commit and fails on the key's
        // uniqueness, with nothing of this publish stored; a second run sees the key and takes
        // the revision path, as if the publishes had come one after the other.
        var raced = false
        while true {
            do {
                return try database.transaction {
                    try store(keys, reportType: reportType, healthAuthority: healthAuthority, traveler: traveler, revisionToken: revisionToken, now: now)
                }
            } catch let error as PublishError {
                throw error
            } catch {
                guard !raced, (error as? DatabaseError)?.isUniqueViolation == true else {
                    throw PublishError(.internalError, "storing the keys: \(error)")
                }
                raced = true
            }
        }
    }

    /// One publish's statements, inside its transaction.
    private func store(
        _ keys: [PublishValidator.AcceptedKey], reportType: Int32, healthAuthority: String, traveler: Bool, revisionToken: String?, now: UnixTime
    ) throws -> Published {
        var inserted = 0
        var revised = 0
        let tokenKeys = try revisionToken.map { token throws -> Set<[UInt8]> in
            let rows = try database.query("SELECT key FROM revision_token_key WHERE token = ?1", [.text(token)])
            guard !rows.isEmpty else { throw PublishError(.invalidRevisionToken, "the revision token is not one this server issued") }
            return Set(rows.compactMap { $0.first?.blob })
        }
        for accepted in keys {
            let bytes = accepted.key.keyData.bytes
            let existing = try database.query(
                "SELECT report_type, revised_report_type, rolling_start, rolling_period FROM exposure WHERE key = ?1", [.blob(bytes)]
            ).first
            guard let existing else {
                // The reference's InsertAndReviseExposures skips it: a negative test has nothing to publish.
                if reportType == PublishValidator.ReportType.revoked { continue }
                try database.query(
                    """
                    INSERT INTO exposure (key, rolling_start, rolling_period, transmission_risk, report_type, days_since_onset,
                        health_authority, traveler, export_after, created)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                    """,
                    [
                        .blob(bytes), .integer(Int64(accepted.key.rollingStartIntervalNumber.rawValue)), .integer(Int64(accepted.key.rollingPeriod)),
                        .integer(Int64(accepted.transmissionRisk)), .integer(Int64(reportType)),
                        accepted.daysSinceOnsetOfSymptoms.map { .integer(Int64($0)) } ?? .null, .text(healthAuthority), .integer(traveler ? 1 : 0),
                        .integer(accepted.exportAfter.seconds), .integer(now.seconds),
                    ])
                inserted += 1
                continue
            }
            // A key seen before: a revision, which needs the token of the publish that had it.
            guard let tokenKeys else { throw PublishError(.missingRevisionToken, "a key was published before: send its revision token") }
            // A key's interval never changes (ENS internal/publish/database/exposure.go,
            // ErrIncomingMetadataMismatch; ENS answers it as an internal error, here it is named).
            guard existing[2] == .integer(Int64(accepted.key.rollingStartIntervalNumber.rawValue)), existing[3] == .integer(Int64(accepted.key.rollingPeriod))
            else {
                throw PublishError(
                    .badRequest,
                    "a key was published before with rolling start \(existing[2].integer ?? 0) and period \(existing[3].integer ?? 0), "
                        + "not \(accepted.key.rollingStartIntervalNumber.rawValue) and \(accepted.key.rollingPeriod)")
            }
            guard tokenKeys.contains(bytes) else { throw PublishError(.invalidRevisionToken, "the revision token does not cover a key") }
            let from = existing[0].integer ?? 0
            // The same type again (first or revised) changes nothing and is no error.
            if from == Int64(reportType) || existing[1] == .integer(Int64(reportType)) { continue }
            guard existing[1] == .null else { throw PublishError(.keyAlreadyRevised, "a key was already revised") }
            guard Self.mayRevise(from: from, to: reportType) else {
                throw PublishError(.invalidReportTypeTransition, "report type \(from) cannot become \(reportType)")
            }
            // Only if still unrevised: another replica may have revised it since the
            // look above (PostgreSQL re-checks the condition after waiting for it).
            let updated = try database.query(
                """
                UPDATE exposure SET revised_report_type = ?2, revised_at = ?3, export_after = ?4, revised_days_since_onset = ?5,
                    revised_transmission_risk = ?6
                WHERE key = ?1 AND revised_report_type IS NULL RETURNING key
                """,
                [
                    .blob(bytes), .integer(Int64(reportType)), .integer(now.seconds), .integer(accepted.exportAfter.seconds),
                    accepted.daysSinceOnsetOfSymptoms.map { .integer(Int64($0)) } ?? .null, .integer(Int64(accepted.transmissionRisk)),
                ])
            guard !updated.isEmpty else { throw PublishError(.keyAlreadyRevised, "a key was already revised") }
            revised += 1
        }
        let token = Self.newToken()
        try database.query("INSERT INTO revision_token (token, created) VALUES (?1, ?2)", [.text(token), .integer(now.seconds)])
        for accepted in keys {
            try database.query("INSERT INTO revision_token_key (token, key) VALUES (?1, ?2)", [.text(token), .blob(accepted.key.keyData.bytes)])
        }
        return Published(inserted: inserted, revised: revised, revisionToken: token)
    }

    /// The reference's ValidReportTypeTransition, with a key of no type (0) taken as likely:
    /// likely → confirmed or negative; self-report → confirmed, likely or negative.
    static func mayRevise(from: Int64, to: Int32) -> Bool {
        typealias Type = PublishValidator.ReportType
        switch from == 0 ? Int64(Type.likely) : from {
        case Int64(Type.likely): return to == Type.confirmed || to == Type.revoked
        case Int64(Type.selfReport): return to == Type.confirmed || to == Type.likely || to == Type.revoked
        default: return false
        }
    }

    /// Keys whose export time has come, within [start, end) of creation or revision, for an export batch.
    package func exportable(now: UnixTime) throws(DatabaseError) -> Int {
        try database.query("SELECT count(*) FROM exposure WHERE export_after <= ?1", [.integer(now.seconds)]).first?.first?.integer.map(Int.init) ?? 0
    }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }
}
