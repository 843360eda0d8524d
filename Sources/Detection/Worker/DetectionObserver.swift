// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The outcome of one run, as observers, the journal and the hook see it.
package struct DetectionOutcome: Sendable {
    package var finished: UnixTime
    package var result: DetectionResult?
    package var error: DetectionWorkerError?
    /// The owner's answer once the run ended: what ExposureDays, LastExposureTime and
    /// ExposureClassification show, under the configured configuration, over everything stored.
    package var answer = ExposureAnswer()

    package init(finished: UnixTime, result: DetectionResult?, error: DetectionWorkerError?) {
        self.finished = finished
        self.result = result
        self.error = error
    }

    /// Whether the owner's answer has an exposure day: ExposureDetected, the hook's "exposed" and
    /// ExposureDays read this one answer, so they can never disagree (a run asked with another
    /// configuration returns its own result, but changes neither).
    package var exposed: Bool { !answer.days.isEmpty }

    /// What went wrong, as LastDetectionError says it: the run's error, or the files it refused
    /// (a run that refused files finished, but did not check their keys); `nil` when nothing did.
    package var problem: String? {
        if let error { return "\(error)" }
        return result?.refusals?.description
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
