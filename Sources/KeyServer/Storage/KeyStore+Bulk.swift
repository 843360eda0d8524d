// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
package import ENCore

extension KeyStore {
    /// Stores `keys` straight into the table, out of their embargo at `exportAfter`, in one
    /// transaction of multi-row statements (500 rows each): the benchmarks' bulk path, for stores of
    /// national size (`gaen-bench export`), past the publish API and its 30 keys a request. The
    /// schema's checks still apply; a key already stored fails the whole call. On PostgreSQL the
    /// table is analyzed after.
    package func bulkLoad(_ keys: [StoredKey], healthAuthority: String, exportAfter: UnixTime, created: UnixTime) throws {
        try database.transaction {
            var start = 0
            while start < keys.count {
                let chunk = keys[start..<min(keys.count, start + 500)]
                var values = [String]()
                var parameters: [DatabaseValue] = [.text(healthAuthority), .integer(exportAfter.seconds), .integer(created.seconds)]
                for key in chunk {
                    let first = parameters.count + 1
                    values.append("(?\(first), ?\(first + 1), ?\(first + 2), ?\(first + 3), ?\(first + 4), ?\(first + 5), ?1, 0, ?2, ?3)")
                    parameters += [
                        .blob(key.key.keyData.bytes), .integer(Int64(key.key.rollingStartIntervalNumber.rawValue)), .integer(Int64(key.key.rollingPeriod)),
                        .integer(Int64(key.transmissionRisk)), .integer(Int64(key.reportType)),
                        key.daysSinceOnsetOfSymptoms.map { .integer(Int64($0)) } ?? .null,
                    ]
                }
                try database.query(
                    """
                    INSERT INTO exposure (key, rolling_start, rolling_period, transmission_risk, report_type, days_since_onset, health_authority,
                        traveler, export_after, created) VALUES \(values.joined(separator: ", "))
                    """, parameters)
                start += chunk.count
            }
        }
        // The planner's statistics, which autovacuum would gather soon after a load this size:
        // without them PostgreSQL reads each page of an export by a plan that costs 200 ms a page
        // (22.8 s for 750,000 keys instead of 7.6 s).
        if database.engine == .postgreSQL { try database.query("ANALYZE exposure") }
    }
}
