// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
package import ENCore
package import Storage

/// What the worker keeps about its runs, in `<data-dir>/detection-state.json` (atomic, 0600): when
/// the last run finished, its error, when the timer runs next and when the key server last
/// answered. The results themselves are in `exposure-results.json` (`ExposureResults`).
///
/// Versions before per-key results also kept the last run's windows here (`windows`, a JSON array
/// in a string, and `last_result`); `legacyWindows(in:)` reads them once, for the migration.
package struct DetectionState: Sendable {
    package var lastDetection: UnixTime?
    package var lastError: String?
    package var nextDetection: UnixTime?
    /// When the key server last gave every file a run asked for (the run may still fail later).
    package var lastDownload: UnixTime?
    /// When the stored results were found damaged and lost: until a run has matched every key file
    /// again, the answer may lack days the owner was told of, so no `cleared` is announced.
    package var resultsLost: UnixTime?

    package init(
        lastDetection: UnixTime? = nil, lastError: String? = nil, nextDetection: UnixTime? = nil, lastDownload: UnixTime? = nil,
        resultsLost: UnixTime? = nil
    ) {
        self.lastDetection = lastDetection
        self.lastError = lastError
        self.nextDetection = nextDetection
        self.lastDownload = lastDownload
        self.resultsLost = resultsLost
    }

    static func path(in dataDirectory: DataDirectory) -> String { dataDirectory.path(of: "detection-state.json") }
    static let maximumFileBytes = 64 << 20

    static func object(in dataDirectory: DataDirectory) -> [String: Any]? {
        guard let bytes = try? AtomicFile.read(path(in: dataDirectory), limit: maximumFileBytes) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    package static func load(from dataDirectory: DataDirectory) -> DetectionState {
        guard let object = object(in: dataDirectory) else { return DetectionState() }
        return DetectionState(
            // A damaged file may hold any integer: a time past UnixTime's range reads as absent.
            lastDetection: (object["last_detection"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) },
            lastError: object["last_error"] as? String,
            nextDetection: (object["next_detection"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) },
            // Absent in files of versions before it was kept.
            lastDownload: (object["last_download"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) },
            resultsLost: (object["results_lost"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) })
    }

    /// The windows the previous format kept (`windows`); empty when there are none or any of them
    /// does not read back.
    static func legacyWindows(in dataDirectory: DataDirectory) -> [ExposureWindow] {
        guard let text = object(in: dataDirectory)?["windows"] as? String,
            let list = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        else { return [] }
        let windows = list.compactMap(ExposureWindow.init(json:))
        return windows.count == list.count ? windows : []
    }

    func save(to dataDirectory: DataDirectory) throws(DetectionWorkerError) {
        let value = JSONValue.object([
            ("last_detection", lastDetection.map { .int($0.seconds) } ?? .null),
            ("last_error", lastError.map { .string($0) } ?? .null),
            ("next_detection", nextDetection.map { .int($0.seconds) } ?? .null),
            ("last_download", lastDownload.map { .int($0.seconds) } ?? .null),
            ("results_lost", resultsLost.map { .int($0.seconds) } ?? .null),
        ])
        do {
            try AtomicFile.write(Array(value.serialized().utf8), to: Self.path(in: dataDirectory))
        } catch {
            throw .storage(error)
        }
    }
}
