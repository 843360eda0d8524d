// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import KeyFiles

/// What the indexes before the last found of each key's RPIs, no rule applied yet: kept by the
/// key's identity (its bytes, start and period: what its RPIs depend on), so that every copy of a
/// key in every file finds them. Only keys that were heard are here: a few, not the file.
package struct PartialHits: Sendable {
    package struct KeyIdentity: Hashable, Sendable {
        var keyData: Bytes16
        var start: UInt32
        var period: UInt32

        init(_ key: DiagnosisKey) {
            keyData = key.key.keyData
            start = key.key.rollingStartIntervalNumber.rawValue
            period = key.key.rollingPeriod
        }
    }

    private var byKey: [KeyIdentity: [(offset: Int, aggregates: [ContactAggregate])]] = [:]

    package init() {}

    package var isEmpty: Bool { byKey.isEmpty }
    package var keyCount: Int { byKey.count }

    func hits(for key: DiagnosisKey) -> [(offset: Int, aggregates: [ContactAggregate])]? {
        byKey[KeyIdentity(key)]
    }

    /// Sets what one index found of a key (a second copy of the key finds the same).
    mutating func set(_ found: [(offset: Int, aggregates: [ContactAggregate])], for key: DiagnosisKey) {
        byKey[KeyIdentity(key)] = found
    }

    /// Adds what other tasks or files found in the same index.
    package mutating func union(_ other: PartialHits) {
        byKey.merge(other.byKey) { mine, _ in mine }
    }

    /// Adds the hits of a later index (newer days) to these.
    package mutating func merge(_ newer: PartialHits) {
        for (identity, found) in newer.byKey {
            byKey[identity] = Self.merging(newer: found, older: byKey[identity] ?? [])
        }
    }

    /// Both lists by offset; for an offset in both, the newer aggregates first.
    static func merging(
        newer: [(offset: Int, aggregates: [ContactAggregate])], older: [(offset: Int, aggregates: [ContactAggregate])]
    ) -> [(offset: Int, aggregates: [ContactAggregate])] {
        if older.isEmpty { return newer }
        if newer.isEmpty { return older }
        var byOffset = [Int: [ContactAggregate]]()
        for (offset, aggregates) in older { byOffset[offset, default: []] += aggregates }
        for (offset, aggregates) in newer { byOffset[offset] = aggregates + (byOffset[offset] ?? []) }
        return byOffset.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
