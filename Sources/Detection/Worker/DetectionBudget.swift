// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Storage

/// The budget's file, `<data-dir>/detection-budget`: the runs counted in the last 24 hours, one
/// Unix time a line, so that a restart does not reset the count. A run is counted before it starts
/// and given back if it fails (Google v1.8). `DetectionStore` reads it once and writes it on each
/// change; the rules of the count are `DetectionSchedule`'s.
package struct DetectionBudget: Sendable {
    package let path: String

    package init(dataDirectory: DataDirectory) {
        path = dataDirectory.path(of: "detection-budget")
    }

    /// The runs counted in the last 24 hours, oldest first.
    package func load(now: UnixTime) -> [UnixTime] {
        guard let bytes = try? AtomicFile.read(path, limit: 1 << 16) else { return [] }
        // A line that is no time (damage) is no run.
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { Int64($0).flatMap { UnixTime(exactlySeconds: $0) } }
            .filter { now.seconds - $0.seconds < DetectionSchedule.window && $0 <= now.adding(seconds: 60) }.sorted()
    }

    func save(_ runs: [UnixTime]) throws(DetectionWorkerError) {
        do {
            try AtomicFile.write(Array(runs.map { "\($0.seconds)\n" }.joined().utf8), to: path)
        } catch {
            throw .storage(error)
        }
    }
}
