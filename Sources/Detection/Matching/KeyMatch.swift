// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
package import KeyFiles

/// One logged aggregate of a diagnosis key's RPI, with the metadata its AEM decrypted to.
package struct MatchedSighting: Hashable, Sendable {
    package var aggregate: ContactAggregate
    package var metadata: BluetoothMetadata

    package init(aggregate: ContactAggregate, metadata: BluetoothMetadata) {
        self.aggregate = aggregate
        self.metadata = metadata
    }
}

/// A diagnosis key that was heard, with every sighting that passed the matching rules, oldest first.
package struct KeyMatch: Hashable, Sendable {
    package var key: DiagnosisKey
    package var sightings: [MatchedSighting]

    package init(key: DiagnosisKey, sightings: [MatchedSighting]) {
        self.key = key
        self.sightings = sightings
    }
}

/// What a matching pass did, for progress reports, logs and benchmarks.
package struct MatchStatistics: Hashable, Sendable {
    package var keys = 0
    /// Keys not derived at all: RECURSIVE report type, or validity (±2 h) outside the log's days.
    package var keysSkipped = 0
    package var rpisDerived = 0
    /// RPIs the filter let through to the table (true matches and false positives).
    package var candidates = 0
    package var matchedKeys = 0
    /// Aggregates found for a key's RPI but dropped, by rule.
    package var droppedOutsideTolerance = 0
    package var droppedByReplayGuard = 0
    package var droppedTxPower = 0
    package var droppedNoRSSI = 0
    /// Keys not matched because a result is stored for them (they may only revise it).
    package var keysWithStoredResult = 0
    /// Results stored by this run, and report types revised.
    package var newResults = 0
    package var revisions = 0
    /// Revised keys that had no stored result (never matched, as GMS does).
    package var revisedKeysWithoutResult = 0

    package init() {}

    mutating func add(_ other: MatchStatistics) {
        keys += other.keys
        keysSkipped += other.keysSkipped
        rpisDerived += other.rpisDerived
        candidates += other.candidates
        matchedKeys += other.matchedKeys
        droppedOutsideTolerance += other.droppedOutsideTolerance
        droppedByReplayGuard += other.droppedByReplayGuard
        droppedTxPower += other.droppedTxPower
        droppedNoRSSI += other.droppedNoRSSI
        keysWithStoredResult += other.keysWithStoredResult
        newResults += other.newResults
        revisions += other.revisions
        revisedKeysWithoutResult += other.revisedKeysWithoutResult
    }
}
