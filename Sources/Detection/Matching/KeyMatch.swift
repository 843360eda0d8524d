// SPDX-License-Identifier: GPL-3.0-or-later

public import ContactLog
public import ENCore
public import KeyFiles

/// One logged aggregate of a diagnosis key's RPI, with the metadata its AEM decrypted to.
public struct Sighting: Hashable, Sendable {
    public var aggregate: ContactAggregate
    public var metadata: BluetoothMetadata

    public init(aggregate: ContactAggregate, metadata: BluetoothMetadata) {
        self.aggregate = aggregate
        self.metadata = metadata
    }
}

/// A diagnosis key that was heard, with every sighting that passed the matching rules, oldest first.
public struct KeyMatch: Hashable, Sendable {
    public var key: DiagnosisKey
    public var sightings: [Sighting]

    public init(key: DiagnosisKey, sightings: [Sighting]) {
        self.key = key
        self.sightings = sightings
    }
}

/// What a matching pass did, for progress reports, logs and benchmarks.
public struct MatchStatistics: Hashable, Sendable {
    public var keys = 0
    /// Keys not derived at all: RECURSIVE report type, or validity (±2 h) outside the log's days.
    public var keysSkipped = 0
    public var rpisDerived = 0
    /// RPIs the filter let through to the table (true matches and false positives).
    public var candidates = 0
    public var matchedKeys = 0
    /// Aggregates found for a key's RPI but dropped, by rule.
    public var droppedOutsideTolerance = 0
    public var droppedByReplayGuard = 0
    public var droppedTxPower = 0
    public var droppedNoRSSI = 0
    /// Keys not matched because a result is stored for them (they may only revise it).
    public var keysWithStoredResult = 0
    /// Results stored by this run, and report types revised.
    public var newResults = 0
    public var revisions = 0
    /// Revised keys that had no stored result (never matched, as GMS does).
    public var revisedKeysWithoutResult = 0

    public init() {}

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
