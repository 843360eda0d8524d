// SPDX-License-Identifier: GPL-3.0-or-later

package import Conditions
package import ENCore
package import KeyFiles
package import Logging
package import Storage

/// The one owner of what detection keeps (issue 48): the stored results
/// (`exposure-results.json`), the run state (`detection-state.json`), the budget's counted runs
/// (`detection-budget`), the fetched configuration (`exposure-configuration.json`) and the
/// processed files (`processed-key-files`). Each is read once, at start, and written when it
/// changes; everything detection shows is published as one `DetectionSnapshot` on commit, failure,
/// reconfigure, the timer's setting and the date, so that readers never open a file.
package actor DetectionStore {
    private let dataDirectory: DataDirectory
    private let clock: any WallClock
    private let schedule: DetectionSchedule
    private let logger: Logger
    private let budgetFile: DetectionBudget
    private let processed: ProcessedFilesStore
    package private(set) var state: DetectionState
    /// One result per matched key, kept 14 days.
    package private(set) var results: ExposureResults
    /// The health authority's configuration, used when a run is not given one: the configured one,
    /// or the last one fetched from `configurationURL`.
    package private(set) var configuration: ExposureConfiguration
    /// Where the health authority serves its configuration (JSON); fetched before each run.
    package private(set) var configurationURL: String?
    /// The runs counted in the budget's window, oldest first (older ones dropped as time passes).
    private var counted: [UnixTime]
    /// The published snapshot; `changes` is signalled when it changes.
    private let board: ObservedValue<DetectionSnapshot>
    package nonisolated let changes = Changes()

    package init(
        dataDirectory: DataDirectory, configuration: ExposureConfiguration, configurationURL: String?, schedule: DetectionSchedule,
        clock: any WallClock, logger: Logger
    ) {
        self.dataDirectory = dataDirectory
        self.clock = clock
        self.schedule = schedule
        self.logger = logger
        self.configurationURL = configurationURL
        // The last configuration fetched survives a restart, so a server that is down then does not
        // leave the daemon scoring with something else.
        self.configuration = configurationURL == nil ? configuration : (RemoteConfiguration.cached(in: dataDirectory) ?? configuration)
        budgetFile = DetectionBudget(dataDirectory: dataDirectory)
        processed = ProcessedFilesStore(dataDirectory: dataDirectory)
        let now = clock.now()
        counted = budgetFile.load(now: now)
        var state = DetectionState.load(from: dataDirectory)
        let loaded = ExposureResults.load(from: dataDirectory, now: now)
        results = loaded.results
        if loaded.lost, let problem = loaded.problem {
            // The results are lost, not the exposures: the contact log and the server still hold
            // what made them. Recorded first (the files forgotten, the loss kept in the state),
            // then the damaged file moved aside, so a crash between reads the damage again.
            var recorded = true
            do {
                try processed.forgetAll()
            } catch {
                recorded = false
                logger.warning("processed key files not forgotten", metadata: ["error": "\(error)"])
            }
            state.resultsLost = state.resultsLost ?? now
            state.lastError = "\(problem); every key file is matched again at the next detection"
            do {
                try state.save(to: dataDirectory)
            } catch {
                recorded = false
            }
            let fate = recorded ? ExposureResults.setAsideDamaged(in: dataDirectory, now: now) : "left in place"
            logger.warning(
                "stored exposure results lost; every key file the server still holds is matched again",
                metadata: ["problem": "\(problem)", "file": "\(fate)"])
        } else if let problem = loaded.problem {
            logger.warning("stored exposure results", metadata: ["problem": "\(problem)"])
        }
        if loaded.migrated {
            // Written now: the next save of the state file drops the windows it was read from.
            do {
                try loaded.results.save(to: dataDirectory)
                logger.notice(
                    "exposure windows of the previous format kept as stored results", metadata: ["windows": "\(loaded.results.legacyWindows.count)"])
            } catch {
                logger.warning("stored exposure results not migrated", metadata: ["error": "\(error)"])
            }
        }
        self.state = state
        let day = UTCDay(containing: now)
        let answer = ExposureAnswer(DetectionPipeline.score(loaded.results, configuration: self.configuration, now: now).verdict)
        board = ObservedValue(
            Self.snapshot(state: state, counted: counted, answer: answer, day: day, configuration: self.configuration, schedule: schedule))
    }

    // MARK: What readers see

    /// The snapshot last published, without waiting for the actor.
    package nonisolated var published: DetectionSnapshot { board.value }

    /// The snapshot as of now: what time alone moved (the date, the budget's window) is brought
    /// up to date first, from memory.
    package func current() -> DetectionSnapshot {
        let now = clock.now()
        let day = UTCDay(containing: now)
        let expired = counted.first.map { now.seconds - $0.seconds >= DetectionSchedule.window } ?? false
        if day != board.value.day || expired { publish() }
        return board.value
    }

    /// Every stored result scored with `configuration` (the configured one when `nil`), without
    /// matching: GetExposureWindows and GetDailySummaries.
    package func rescore(_ configuration: ExposureConfiguration? = nil) -> DetectionResult {
        DetectionPipeline.score(results, configuration: configuration ?? self.configuration, now: clock.now())
    }

    /// When the timer's run `delay` from now will happen, moved later by a spent budget.
    package func nextRun(delay: Duration) -> UnixTime {
        let now = clock.now()
        return schedule.nextRun(now: now, delay: delay, counted: countedRuns(now: now), configuration)
    }

    // MARK: Runs

    /// Counts a run now if the budget of `configuration`'s mode allows one.
    ///
    /// - Returns: the time counted (pass it to `giveBack` if the run fails).
    package func reserve(for configuration: ExposureConfiguration) throws(DetectionWorkerError) -> UnixTime {
        let now = clock.now()
        var runs = countedRuns(now: now)
        if let next = DetectionSchedule.nextAllowed(counted: runs, limit: schedule.runsPerDay(configuration)) {
            throw .rateLimited(nextAllowed: next)
        }
        runs.append(now)
        try budgetFile.save(runs)
        counted = runs
        publish()
        return now
    }

    /// Uncounts a run that failed.
    package func giveBack(_ reservation: UnixTime) {
        var runs = countedRuns(now: clock.now())
        if let index = runs.lastIndex(of: reservation) { runs.remove(at: index) }
        // Unwritten, the run stays counted after a restart: a run lost, never one too many.
        try? budgetFile.save(runs)
        counted = runs
        publish()
    }

    /// The index's files not processed yet, in index order.
    package func pending(_ index: [String]) throws(DetectionWorkerError) -> [String] {
        do {
            return try processed.pending(index)
        } catch {
            throw .processedFiles(error)
        }
    }

    /// The server gave every file the run asked for (kept with the run's outcome).
    package func downloaded() {
        state.lastDownload = clock.now()
        publish()
    }

    /// Keeps a finished run: its results stored, then its matched files marked processed, then the
    /// state, in that order, so that a crash between leaves files to match again, never results
    /// lost. The answer is the run's own verdict when it was scored with the configured
    /// configuration, and scored anew otherwise: each run is scored once under each configuration.
    /// A full disk fails the run like any other cause, its budget given back when not even the
    /// results were stored (issue 40: nothing said why).
    package func commit(
        _ run: DetectionRun, processedFiles: [String], reservation: UnixTime, scoredWith configuration: ExposureConfiguration?
    ) throws(DetectionWorkerError) -> ExposureAnswer {
        do {
            try run.results.save(to: dataDirectory)
        } catch {
            giveBack(reservation)
            throw .storage(error)
        }
        results = run.results
        let now = clock.now()
        state.lastDetection = now
        // A run that refused files has not checked their keys: it is not a clean answer.
        state.lastError = run.result.refusals?.description
        do {
            try processed.markProcessed(processedFiles, at: now)
        } catch {
            throw .processedFiles(error)
        }
        if state.resultsLost != nil {
            // Every file the server holds was matched again: the results are whole again.
            state.resultsLost = nil
            logger.notice("stored exposure results rebuilt from the key files and the contact log")
        }
        try state.save(to: dataDirectory)
        let answer = configuration == nil ? ExposureAnswer(run.result.verdict) : nil
        publish(rescore: answer == nil, answer: answer)
        return board.value.answer
    }

    /// Records a run that failed: LastDetectionError (kept in memory when even that cannot be
    /// written). The owner's answer, unchanged.
    package func fail(_ error: DetectionWorkerError) -> ExposureAnswer {
        // Escaped: a cause may quote a server's bytes (issue 53).
        state.lastError = OutsideText.escaped("\(error)")
        try? state.save(to: dataDirectory)
        publish()
        return board.value.answer
    }

    /// The timer's next run (nil: the timer stopped).
    package func schedule(_ next: UnixTime?) {
        state.nextDetection = next
        try? state.save(to: dataDirectory)
        publish()
    }

    // MARK: Configuration

    /// A reload's exposure configuration: a file's, read and checked by the caller, or a URL whose
    /// last fetched configuration stays in use until the next run fetches it again.
    package func reconfigure(_ configuration: ExposureConfiguration, url: String?) {
        configurationURL = url
        self.configuration = url == nil ? configuration : (RemoteConfiguration.cached(in: dataDirectory) ?? configuration)
        publish(rescore: true)
    }

    /// Whether a fetched configuration is kept from an earlier run (then a server that cannot be
    /// reached leaves it in use).
    package var hasFetchedConfiguration: Bool { configurationURL != nil && RemoteConfiguration.cached(in: dataDirectory) != nil }

    /// A configuration the authority served: parsed and, if it is one, kept and used.
    package func accept(configuration bytes: [UInt8], from url: String) throws(DetectionWorkerError) {
        configuration = try RemoteConfiguration.accept(bytes, from: url, in: dataDirectory)
        publish(rescore: true)
    }

    // MARK: Reset

    /// ResetAllData: the stored results and the run state are deleted (the timer's next run kept).
    package func reset() throws(DetectionWorkerError) {
        do {
            try AtomicFile.remove(ExposureResults.path(in: dataDirectory))
            try AtomicFile.remove(DetectionState.path(in: dataDirectory))
        } catch {
            throw .storage(error)
        }
        results = ExposureResults()
        state = DetectionState(nextDetection: state.nextDetection)
        publish(rescore: true)
    }

    // MARK: Private

    private func countedRuns(now: UnixTime) -> [UnixTime] {
        counted.filter { now.seconds - $0.seconds < DetectionSchedule.window && $0 <= now.adding(seconds: 60) }
    }

    /// Publishes the snapshot from what is held; the answer scored again when asked (a new
    /// configuration, new results, a new date) or taken as given.
    private func publish(rescore: Bool = false, answer given: ExposureAnswer? = nil) {
        let now = clock.now()
        counted = countedRuns(now: now)
        let day = UTCDay(containing: now)
        // A new date ages the results: the answer is scored again whatever else changed.
        let answer = given ?? (rescore || day != board.value.day ? ExposureAnswer(self.rescore().verdict) : board.value.answer)
        let snapshot = Self.snapshot(state: state, counted: counted, answer: answer, day: day, configuration: configuration, schedule: schedule)
        if board.set(snapshot) { changes.signal() }
    }

    private static func snapshot(
        state: DetectionState, counted: [UnixTime], answer: ExposureAnswer, day: UTCDay, configuration: ExposureConfiguration, schedule: DetectionSchedule
    ) -> DetectionSnapshot {
        DetectionSnapshot(
            lastDetection: state.lastDetection, lastError: state.lastError, lastDownload: state.lastDownload,
            nextDetection: state.nextDetection.map { schedule.nextRun(now: $0, delay: .zero, counted: counted, configuration) },
            remainingRuns: schedule.remaining(counted: counted.count, configuration),
            budgetRelease: counted.first?.adding(seconds: DetectionSchedule.window), answer: answer, day: day,
            resultsRebuilding: state.resultsLost != nil)
    }
}
