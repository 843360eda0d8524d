// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// A log's matching indexes, one at a time, oldest days first: each holds whole days and stays
/// within a budget of bytes (a day alone may exceed it: one day is the smallest part, and the
/// scanner's cap bounds a day). Detection matches every key file against one index, then builds
/// the next; memory is one index, whatever the log's size.
package struct MatchingPartitions {
    /// The index memory gaend allows itself for matching: with an idle daemon at about 40 MiB and
    /// the key files streamed, detection stays well inside the unit's 128 MiB.
    package static let defaultBudgetBytes = 24 << 20

    package let reader: ContactLogReader
    package let budgetBytes: Int
    /// Every day with a segment when the partitions were planned, oldest first.
    package let days: [UTCDay]
    private let files: [(UTCDay, String)]
    private var next = 0
    private let seed: (UInt64, UInt64)

    package init(
        reader: ContactLogReader, budgetBytes: Int = defaultBudgetBytes,
        seed: (UInt64, UInt64) = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max) | 1)
    ) throws(ContactLogError) {
        self.reader = reader
        self.budgetBytes = budgetBytes
        self.seed = seed
        files = try reader.segmentFiles().sorted { $0.0 < $1.0 }
        days = files.map(\.0)
    }

    /// Whether every day has been indexed.
    package var isDone: Bool { next >= files.count }

    /// The index of the next days, or nil when every day has been indexed. The first call on a log
    /// with no segment gives an empty index.
    package mutating func nextIndex() -> MatchingIndex? {
        if isDone {
            guard next == 0, files.isEmpty else { return nil }
            next = 1
            return MatchingIndex(reader: reader, candidates: [], budgetBytes: budgetBytes, seed: seed)
        }
        let index = MatchingIndex(reader: reader, candidates: files[next...], budgetBytes: budgetBytes, seed: seed)
        next += max(1, index.days.count)
        return index
    }
}
