// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// What detection shows, as one value: the last run, the answer, the budget and the timer.
/// `DetectionStore` publishes it when a run commits or fails, when the configuration changes, when
/// the timer is set and when time alone moves it (the date, the budget's window); Manager1, the
/// exposure hook and the LED read it without touching a file (issue 48: ten GetAll once opened
/// `detection-budget` 270 times).
package struct DetectionSnapshot: Sendable, Equatable {
    /// When the last successful run finished, and the last run's problem (its error, or the files it
    /// refused): LastDetectionTime, LastDetectionError.
    package var lastDetection: UnixTime?
    package var lastError: String?
    /// When the key server last gave every file a run asked for.
    package var lastDownload: UnixTime?
    /// When the timer runs next, moved later by a spent budget; nil when the timer is not running.
    package var nextDetection: UnixTime?
    /// Runs left in the current 24 hours under the configured mode's budget.
    package var remainingRuns: Int
    /// When `remainingRuns` next grows by time alone (the oldest counted run leaves the window).
    package var budgetRelease: UnixTime?
    /// The owner's answer under the configured configuration, scored on `day`.
    package var answer: ExposureAnswer
    package var day: UTCDay
    /// The stored results were lost and not yet rebuilt by a run: the answer may lack days the owner
    /// was told of, and no `cleared` may be announced from it.
    package var resultsRebuilding: Bool

    package init(
        lastDetection: UnixTime? = nil, lastError: String? = nil, lastDownload: UnixTime? = nil, nextDetection: UnixTime? = nil,
        remainingRuns: Int = 0, budgetRelease: UnixTime? = nil, answer: ExposureAnswer = ExposureAnswer(), day: UTCDay = UTCDay(daysSinceEpoch: 0),
        resultsRebuilding: Bool = false
    ) {
        self.lastDetection = lastDetection
        self.lastError = lastError
        self.lastDownload = lastDownload
        self.nextDetection = nextDetection
        self.remainingRuns = remainingRuns
        self.budgetRelease = budgetRelease
        self.answer = answer
        self.day = day
        self.resultsRebuilding = resultsRebuilding
    }
}
