// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
public import ENCore
public import Storage

/// What the worker keeps between runs, in `<data-dir>/detection-state.json` (atomic, 0600): when
/// the last run finished, its error, and its windows and summaries, so that a new configuration can
/// be scored again without matching again.
///
/// Windows are stored as JSON (`ExposureWindow(json:)` reads them back); the result JSON beside
/// them is what callers are shown.
public struct DetectionState: Sendable {
    public var lastDetection: UnixTime?
    public var lastError: String?
    public var nextDetection: UnixTime?
    /// The last successful run's result as JSON (windows and summaries, no identifiers).
    public var lastResultJSON: String?
    /// The last successful run's windows as a JSON array, read back by `storedWindows()`.
    public var windowsJSON: String?

    public init(
        lastDetection: UnixTime? = nil, lastError: String? = nil, nextDetection: UnixTime? = nil, lastResultJSON: String? = nil,
        windowsJSON: String? = nil
    ) {
        self.lastDetection = lastDetection
        self.lastError = lastError
        self.nextDetection = nextDetection
        self.lastResultJSON = lastResultJSON
        self.windowsJSON = windowsJSON
    }

    static func path(in dataDirectory: DataDirectory) -> String { dataDirectory.path(of: "detection-state.json") }

    public static func load(from dataDirectory: DataDirectory) -> DetectionState {
        guard let bytes = try? AtomicFile.read(path(in: dataDirectory), limit: 64 << 20),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return DetectionState() }
        return DetectionState(
            // A damaged file may hold any integer: a time past UnixTime's range reads as absent.
            lastDetection: (object["last_detection"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) },
            lastError: object["last_error"] as? String,
            nextDetection: (object["next_detection"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) },
            lastResultJSON: object["last_result"] as? String, windowsJSON: object["windows"] as? String)
    }

    /// The stored windows, or `nil` if there are none or they do not read back.
    public func storedWindows() -> [ExposureWindow]? {
        guard let windowsJSON, let list = try? JSONSerialization.jsonObject(with: Data(windowsJSON.utf8)) as? [[String: Any]] else { return nil }
        let windows = list.compactMap(ExposureWindow.init(json:))
        return windows.count == list.count ? windows : nil
    }

    func save(to dataDirectory: DataDirectory) throws(DetectionWorkerError) {
        let value = JSONValue.object([
            ("last_detection", lastDetection.map { .int($0.seconds) } ?? .null),
            ("last_error", lastError.map { .string($0) } ?? .null),
            ("next_detection", nextDetection.map { .int($0.seconds) } ?? .null),
            ("last_result", lastResultJSON.map { .string($0) } ?? .null),
            ("windows", windowsJSON.map { .string($0) } ?? .null),
        ])
        do {
            try AtomicFile.write(Array(value.serialized().utf8), to: Self.path(in: dataDirectory))
        } catch {
            throw .storage("\(error)")
        }
    }
}
