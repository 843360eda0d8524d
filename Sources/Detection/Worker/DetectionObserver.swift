// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The outcome of one run, as observers, the journal and the hook see it.
package struct DetectionOutcome: Sendable {
    package var finished: UnixTime
    package var result: DetectionResult?
    package var error: DetectionWorkerError?

    /// Days with an exposure that scores (v2 summaries, or v1 exposures above the minimum risk
    /// score), or a flagged per-day check, among everything stored.
    package var exposed: Bool {
        guard let result else { return false }
        return !result.exposureDays.isEmpty || !result.dailySummaries.isEmpty || result.perDay.contains(where: \.exposed)
    }
}

/// Told about runs as they go (the D-Bus service's signals later).
package protocol DetectionObserver: Sendable {
    /// Keys matched so far in the current run, of the keys in the files read so far (files are read
    /// one at a time, so the total grows); called from the matching tasks: cheap, never blocking.
    func detectionProgress(keysDone: Int, keysTotal: Int)
    /// Called from the worker's actor when a run ends, successfully or not.
    func detectionFinished(_ outcome: DetectionOutcome) async
}
