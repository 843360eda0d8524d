// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Storage

/// How many detection runs may start in any 24 hours: 6 in v2 mode, 20 in v1 mode, as the
/// frameworks allow. A run is counted before it starts and given back if it fails (Google v1.8), and
/// the count is kept in `<data-dir>/detection-budget` so a restart does not reset it.
package struct DetectionBudget: Sendable {
    package let path: String
    package static let window = DetectionSchedule.window

    package init(dataDirectory: DataDirectory) {
        path = dataDirectory.path(of: "detection-budget")
    }

    /// The runs counted in the last 24 hours, oldest first.
    package func load(now: UnixTime) -> [UnixTime] {
        guard let bytes = try? AtomicFile.read(path, limit: 1 << 16) else { return [] }
        // A line that is no time (damage) is no run.
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { Int64($0).flatMap { UnixTime(exactlySeconds: $0) } }
            .filter { now.seconds - $0.seconds < Self.window && $0 <= now.adding(seconds: 60) }.sorted()
    }

    /// Counts a run at `now` if fewer than `limit` ran in the last 24 hours.
    ///
    /// - Returns: the time counted (pass it to `giveBack` if the run fails).
    /// - Throws: `DetectionWorkerError.rateLimited` with the time the next run is allowed.
    package func reserve(now: UnixTime, limit: Int) throws(DetectionWorkerError) -> UnixTime {
        if let next = nextAllowed(now: now, limit: limit) { throw .rateLimited(nextAllowed: next) }
        var runs = load(now: now)
        runs.append(now)
        try save(runs)
        return now
    }

    /// When the next run is allowed, if `limit` runs were counted in the last 24 hours; `nil` when
    /// one is allowed now.
    package func nextAllowed(now: UnixTime, limit: Int) -> UnixTime? {
        DetectionSchedule.nextAllowed(counted: load(now: now), limit: limit)
    }

    /// Uncounts a run that failed.
    package func giveBack(_ reservation: UnixTime, now: UnixTime) throws(DetectionWorkerError) {
        var runs = load(now: now)
        if let index = runs.lastIndex(of: reservation) { runs.remove(at: index) }
        try save(runs)
    }

    private func save(_ runs: [UnixTime]) throws(DetectionWorkerError) {
        do {
            try AtomicFile.write(Array(runs.map { "\($0.seconds)\n" }.joined().utf8), to: path)
        } catch {
            throw .storage(error)
        }
    }
}
