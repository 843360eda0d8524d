// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import KeyFiles

/// Every stored exposure result, one per matched key, kept across runs for 14 days: what GMS's
/// `ExposureResultStorage` holds and what windows, daily summaries and the v1 summary are computed
/// over (`ExposureWindowUtils.getExposureWindows` reads all stored results, not one run's).
package struct ExposureResults: Sendable {
    /// Days a result is kept after its newest sighting, and windows are shown after their day:
    /// the 14 days the framework keeps data for.
    package static let retentionDays: Int64 = 14

    package private(set) var byKey: [Bytes16: ExposureResult]
    /// Windows kept by versions before per-key results (the state file's `windows`), which carry no
    /// key: shown and scored until they age out, never revised.
    package private(set) var legacyWindows: [ExposureWindow]

    package init(_ results: [ExposureResult] = [], legacyWindows: [ExposureWindow] = []) {
        byKey = Dictionary(results.map { ($0.match.key.key.keyData, $0) }, uniquingKeysWith: { first, _ in first })
        self.legacyWindows = legacyWindows
    }

    package var results: [ExposureResult] { Array(byKey.values) }
    package var isEmpty: Bool { byKey.isEmpty && legacyWindows.isEmpty }

    package func hasResult(for key: Bytes16) -> Bool { byKey[key] != nil }

    /// Stores a new match. A key that already has a result keeps it: GMS matches a key once
    /// (`ExposureMatchingTracer` skips keys `hasResult` finds); later copies can only revise it.
    ///
    /// - Returns: whether it was stored.
    @discardableResult
    package mutating func insert(_ match: KeyMatch, at time: UnixTime) -> Bool {
        let key = match.key.key.keyData
        guard byKey[key] == nil else { return false }
        byKey[key] = ExposureResult(match: match, matchedAt: time)
        return true
    }

    /// A later copy or revision of a stored key: relabels its result on a valid transition.
    ///
    /// - Returns: whether the result changed; `false` also when the key has no result.
    @discardableResult
    package mutating func revise(_ key: DiagnosisKey, configuration: V2Configuration) -> Bool {
        guard var result = byKey[key.key.keyData] else { return false }
        guard result.revise(to: key.reportType, configuration: configuration) else { return false }
        byKey[key.key.keyData] = result
        return true
    }

    /// Whether something of `day` is still shown on `today`.
    package static func isRetained(_ day: UTCDay, today: UTCDay) -> Bool {
        day.distance(to: today) <= retentionDays
    }

    /// Drops the results whose newest sighting, and the legacy windows whose day, is more than 14
    /// days before `today`.
    ///
    /// - Returns: how many results and windows were dropped.
    @discardableResult
    package mutating func age(today: UTCDay) -> Int {
        let before = byKey.count + legacyWindows.count
        byKey = byKey.filter { Self.isRetained($0.value.lastDay, today: today) }
        legacyWindows.removeAll { !Self.isRetained($0.day, today: today) }
        return before - byKey.count - legacyWindows.count
    }
}
