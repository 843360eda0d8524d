// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
import ENCore

/// The verification codes' table, `verification_codes`: one row per issued test result, its short
/// and long code as HMACs only (`CodeHMACKey`), each unique so that a lookup finds one row, each
/// with its own expiry, as ENVS pkg/database/vercode.go (`VerificationCode`: `code`, `long_code`,
/// `expires_at`, `long_expires_at`). Rows upgraded from the older table have no long code.
enum CodeTable {
    static func schema(_ types: ColumnTypes) -> String {
        """
        CREATE TABLE IF NOT EXISTS verification_codes (
            code_hmac TEXT PRIMARY KEY,
            long_code_hmac TEXT UNIQUE,
            test_type TEXT NOT NULL,
            symptom_date TEXT,
            test_date TEXT,
            created \(types.integer) NOT NULL,
            expires \(types.integer) NOT NULL,
            long_expires \(types.integer),
            claimed \(types.integer)
        );
        """
    }

    /// Before codes were stored as HMACs, `verification_code` held each 8-digit code as it is.
    /// Its codes still to be used (unclaimed, unexpired at `now`) move to `verification_codes` as
    /// HMACs with their expiry and no long code, and the old table goes, in one transaction under
    /// the schema lock, so that replicas starting together upgrade once and a failure leaves the
    /// old table whole. On SQLite the file is then rewritten (VACUUM) and its write-ahead log
    /// checkpointed and emptied, so the dropped codes linger neither in free pages (Debian's
    /// SQLite zeroes those by default, secure_delete, but not every build does) nor in the main
    /// file's pages the log had not yet replaced.
    static func upgradePlainCodes(_ database: any Database, key: CodeHMACKey, now: UnixTime) throws(DatabaseError) {
        let upgraded: Bool
        do {
            upgraded = try database.transaction { () throws -> Bool in
                _ = try database.lock(.schema, wait: true)
                guard try hasOldTable(database) else { return false }
                let rows = try database.query(
                    "SELECT code, test_type, symptom_date, test_date, created, expires FROM verification_code WHERE claimed IS NULL AND expires > ?1",
                    [.integer(now.seconds)])
                for row in rows {
                    guard let code = row[0].text else { continue }
                    // DO NOTHING: a code somehow there already keeps its row.
                    try database.query(
                        """
                        INSERT INTO verification_codes (code_hmac, test_type, symptom_date, test_date, created, expires)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING
                        """,
                        [.text(key.hmac(code)), row[1], row[2], row[3], row[4], row[5]])
                }
                try database.execute("DROP TABLE verification_code")
                return true
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(engine: database.engine, code: "", message: "\(error)", operation: "upgrading verification_code")
        }
        if upgraded && database.engine == .sqlite {
            try database.execute("VACUUM")
            try database.query("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    static func hasOldTable(_ database: any Database) throws(DatabaseError) -> Bool {
        let sql =
            switch database.engine {
            case .sqlite: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'verification_code'"
            case .postgreSQL: "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'verification_code'"
            }
        return try !database.query(sql).isEmpty
    }
}
