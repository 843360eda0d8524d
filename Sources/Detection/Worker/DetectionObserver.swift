// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The outcome of one run, as observers, the journal and the hook see it.
package struct DetectionOutcome: Sendable {
    package var finished: UnixTime
    package var result: DetectionResult?
    package var error: DetectionWorkerError?

    /// Whether the configuration's rule finds an exposure day among everything stored: the one
    /// definition ExposureDays uses too (`ExposureVerdict`).
    package var exposed: Bool { result?.verdict.exposed ?? false }
}

/// Told about runs as they go (the D-Bus service's signals later).
package protocol DetectionObserver: Sendable {
    /// Keys matched so far in the current run, of the keys in the files read so far (files are read
    /// one at a time, so the total grows); called from the matching tasks: cheap, never blocking.
    func detectionProgress(keysDone: Int, keysTotal: Int)
    /// Called from the worker's actor when a run ends, successfully or not.
    func detectionFinished(_ outcome: DetectionOutcome) async
}
