// SPDX-License-Identifier: GPL-3.0-or-later

package import Conditions
import ContactLog
package import ENCore
package import ENCrypto
package import KeyFiles
package import Logging
package import Storage

/// The detection worker: the Linux stand-in for BGTaskScheduler and `detectExposures`.
///
/// A run: budget → index of pending files → download → verify → parse → match → windows → scores →
/// persisted results → observer and journal line (the exposure hook follows `changes`, Daemon/Hook). Runs never overlap; each has a deadline (the
/// BGTask expiration handler) after which it is cancelled and its error recorded. A failed run gives
/// its budget back and marks no file processed, so the next run downloads them again.
package actor DetectionWorker {
    package struct Settings: Sendable {
        /// How long a run may take before it is cancelled.
        package var deadline: Duration = .seconds(15 * 60)
        /// The timer: every `interval`, plus or minus up to `jitter`.
        package var interval: Duration = .seconds(4 * 3600)
        package var jitter: Duration = .seconds(15 * 60)
        /// Runs per 24 hours in v2 mode and in v1 mode.
        package var runsPerDayV2 = 6
        package var runsPerDayV1 = 20
        package var parallelism = 2

        package init() {}

        /// The rules of when runs may and will happen, from these settings.
        package var schedule: DetectionSchedule {
            DetectionSchedule(interval: interval, jitter: jitter, runsPerDayV2: runsPerDayV2, runsPerDayV1: runsPerDayV1)
        }
    }

    private let dataDirectory: DataDirectory
    /// Nil without a key server (`index-url`): the worker then only keeps and ages the stored
    /// results, which are the owner's answer whether a server is configured or not.
    private let downloader: KeyFileDownloader?
    /// Whether runs can download key files (a key server is configured).
    package nonisolated let canDownload: Bool
    private let policy: SignaturePolicy
    /// The health authority's configuration, used when a run is not given one: the configured one,
    /// or the last one fetched from `configurationURL`.
    package private(set) var defaultConfiguration: ExposureConfiguration { didSet { changes.signal() } }
    /// Where the health authority serves its configuration (JSON); fetched before each run.
    private var configurationURL: String?
    private let clock: any WallClock
    /// Where the timer's waits and the run's deadline pass (the continuous clock; a test's clock).
    private let timerClock: any Clock<Duration>
    private let deadlineClock: any Clock<Duration>
    /// Where the timer's jitter is drawn.
    private let random: any RandomBytesSource
    private let observer: (any DetectionObserver)?
    private let settings: Settings
    private let logger: Logger
    private let budget: DetectionBudget
    private var running = false
    package private(set) var state: DetectionState { didSet { changes.signal() } }
    /// One result per matched key, kept 14 days (`exposure-results.json`).
    package private(set) var results: ExposureResults { didSet { changes.signal() } }
    /// Signalled when what the worker shows may have changed: its state, its results, its
    /// configuration. What changes with time alone is `nextTimedChange()`'s.
    package nonisolated let changes = Changes()
    /// The owner's answer under the configured configuration, for the day it was computed on:
    /// the answer changes only with a run, a new configuration or the date.
    private var cachedAnswer: (day: UTCDay, answer: ExposureAnswer)?

    package init(
        dataDirectory: DataDirectory, downloader: KeyFileDownloader?, policy: SignaturePolicy, defaultConfiguration: ExposureConfiguration,
        clock: any WallClock, timerClock: any Clock<Duration> = ContinuousClock(), deadlineClock: any Clock<Duration> = ContinuousClock(),
        random: any RandomBytesSource = SystemRandom(), observer: (any DetectionObserver)? = nil,
        settings: Settings = Settings(), configurationURL: String? = nil,
        logger: Logger = Logger(label: "gaend.detection")
    ) {
        self.dataDirectory = dataDirectory
        self.downloader = downloader
        canDownload = downloader != nil
        self.policy = policy
        self.configurationURL = configurationURL
        // The last configuration fetched survives a restart, so a server that is down then does not
        // leave the daemon scoring with something else.
        self.defaultConfiguration =
            configurationURL == nil ? defaultConfiguration : (RemoteConfiguration.cached(in: dataDirectory) ?? defaultConfiguration)
        self.clock = clock
        self.timerClock = timerClock
        self.deadlineClock = deadlineClock
        self.random = random
        self.observer = observer
        self.settings = settings
        self.logger = logger
        budget = DetectionBudget(dataDirectory: dataDirectory)
        state = DetectionState.load(from: dataDirectory)
        let loaded = ExposureResults.load(from: dataDirectory, now: clock.now())
        results = loaded.results
        if loaded.lost, let problem = loaded.problem {
            // The results are lost, not the exposures: the contact log and the server still hold
            // what made them. Recorded first (the files forgotten, the loss kept in the state),
            // then the damaged file moved aside, so a crash between reads the damage again.
            var recorded = true
            do {
                try downloader?.store.forgetAll()
            } catch {
                recorded = false
                logger.warning("processed key files not forgotten", metadata: ["error": "\(error)"])
            }
            state.resultsLost = state.resultsLost ?? clock.now()
            state.lastError = "\(problem); every key file is matched again at the next detection"
            do {
                try state.save(to: dataDirectory)
            } catch {
                recorded = false
            }
            let fate = recorded ? ExposureResults.setAsideDamaged(in: dataDirectory, now: clock.now()) : "left in place"
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
    }

    /// A reload's exposure configuration: a file's, read and checked by the caller, or a URL whose
    /// last fetched configuration stays in use until the next run fetches it again.
    package func reconfigure(_ configuration: ExposureConfiguration, url: String?) {
        configurationURL = url
        defaultConfiguration = url == nil ? configuration : (RemoteConfiguration.cached(in: dataDirectory) ?? configuration)
        cachedAnswer = nil
    }

    /// Runs a detection now, with `configuration` or the configured one.
    ///
    /// - Throws: `.busy` while another run is in progress, `.rateLimited` when the budget is spent
    ///   (with the time of the next allowed run), or the run's own failure.
    @discardableResult
    package func runNow(configuration: ExposureConfiguration? = nil) async throws(DetectionWorkerError) -> DetectionResult {
        guard let downloader else { throw .noKeyServer }
        guard !running else { throw .busy }
        // Running from here on, before the first await: the actor takes other calls while this
        // one waits for the configuration or the index, and two runs at once share downloads/
        // and the results (issue 40: the second's spool cleared the first's files, which were
        // then marked processed as empty, and the exposure was never found again).
        running = true
        defer { running = false }
        if configuration == nil, let configurationURL {
            do {
                try await refreshConfiguration(from: configurationURL, downloader: downloader)
            } catch {
                // A run that fails before it starts is still a failed run: LastDetectionError names
                // the configuration and its key, and DetectionFinished says so.
                throw await failed(error)
            }
        }
        if clock.distrust != nil {
            // The key server's answer is a witness to the clock (its Date): asked for the index
            // first, which may be all the clock needed. Nothing else is done on an untrusted clock.
            _ = try? await downloader.pendingFiles()
            if let distrust = clock.distrust { throw await failed(.clockUntrusted(distrust)) }
        }
        let configuration = configuration ?? defaultConfiguration
        let limit = settings.schedule.runsPerDay(configuration)
        let reservation: UnixTime
        do {
            reservation = try budget.reserve(now: clock.now(), limit: limit)
        } catch .rateLimited(let next) {
            throw .rateLimited(nextAllowed: next)
        } catch {
            throw await failed(error)
        }
        let stored = results
        let outcome: Result<(DetectionRun, [String]), DetectionWorkerError> = await withDeadline {
            await self.perform(configuration: configuration, results: stored, downloader: downloader)
        }
        switch outcome {
        case .success(let (run, files)):
            let result = run.result
            // Only now, with the results stored, are the files processed; files of an incomplete
            // batch stay pending, to be matched when the rest of the batch is there.
            // A full disk here fails the run like any other cause: LastDetectionError says so and
            // the journal has it at error level (issue 40: nothing said why).
            do {
                try run.results.save(to: dataDirectory)
            } catch {
                try? budget.giveBack(reservation, now: clock.now())
                throw await failed(.storage(error))
            }
            results = run.results
            cachedAnswer = nil
            state.lastDetection = clock.now()
            // A run that refused files has not checked their keys: it is not a clean answer, and
            // LastDetectionError, StatusReason, DetectionFinished and the journal say so by name.
            let refusals = result.refusals
            state.lastError = refusals?.description
            for file in refusals?.refused ?? [] {
                logger.warning(
                    "key file refused: its keys were not checked",
                    metadata: ["file": "\(OutsideText.escaped(file.name))", "verdict": "\(file.verdict.name)", "reason": "\(file.verdict.reason ?? "")"])
            }
            // Only the files matched are processed. A refused file (a bad signature, an unknown
            // key, an invalid archive, an incomplete batch) is tried again at every run, so that a
            // trusted key fixed or added, or a batch completed, matches it; until then every run
            // says it was refused. One write for the run's files: a run of thousands of files once
            // rewrote and synced the whole set per file, inside the worker, and the API timed out
            // (issue 40). Not marked, they are matched again next time, which changes no result.
            let matched = Set(result.files.filter(\.verdict.isVerified).map(\.name)).subtracting(run.deferredFiles)
            do {
                try downloader.markProcessed(files.filter { matched.contains($0) })
            } catch {
                throw await failed(.processedFiles(error))
            }
            if state.resultsLost != nil {
                // Every file the server holds was matched again: the results are whole again.
                state.resultsLost = nil
                logger.notice("stored exposure results rebuilt from the key files and the contact log")
            }
            do {
                try state.save(to: dataDirectory)
            } catch {
                throw await failed(error)
            }
            await finish(DetectionOutcome(finished: clock.now(), result: result, error: nil))
            return result
        case .failure(let error):
            try? budget.giveBack(reservation, now: clock.now())
            throw await failed(error)
        }
    }

    /// When the runs left next grow by time alone: the oldest counted run leaves the 24 hours.
    /// (The answer's days change with the date, which the caller watches.)
    package func nextTimedChange() -> UnixTime? {
        budget.load(now: clock.now()).first?.adding(seconds: DetectionBudget.window)
    }

    /// Runs left in the current 24 hours under the configured mode's budget.
    package func remainingRuns() -> Int {
        settings.schedule.remaining(counted: budget.load(now: clock.now()).count, defaultConfiguration)
    }

    /// Scores every stored result with `configuration` (the configured one when `nil`), without
    /// matching: GetExposureWindows and GetDailySummaries.
    package func rescore(_ configuration: ExposureConfiguration? = nil) -> DetectionResult {
        DetectionPipeline.score(results, configuration: configuration ?? defaultConfiguration, now: clock.now())
    }

    /// The days with an exposure in the last 14 days and when the latest began, under the
    /// configured configuration.
    package func exposureAnswer() -> ExposureAnswer {
        let today = UTCDay(containing: clock.now())
        if let cachedAnswer, cachedAnswer.day == today { return cachedAnswer.answer }
        let result = rescore()
        let answer = ExposureAnswer(result.verdict)
        cachedAnswer = (today, answer)
        return answer
    }

    /// ResetAllData: the stored results and the run state are deleted.
    package func reset() throws(DetectionWorkerError) {
        do {
            try AtomicFile.remove(ExposureResults.path(in: dataDirectory))
            try AtomicFile.remove(DetectionState.path(in: dataDirectory))
        } catch {
            throw .storage(error)
        }
        results = ExposureResults()
        cachedAnswer = nil
        let next = state.nextDetection
        state = DetectionState(nextDetection: next)
    }

    /// Whether the stored results were lost and are not yet rebuilt by a run: the answer may lack
    /// days the owner was told of, and no `cleared` may be announced from it.
    package var resultsRebuilding: Bool { state.resultsLost != nil }

    /// Records a run that failed: LastDetectionError (kept in memory when even that cannot be
    /// written), the journal, DetectionFinished. The error, to throw.
    private func failed(_ error: DetectionWorkerError) async -> DetectionWorkerError {
        // Escaped: a cause may quote a server's bytes (issue 53).
        state.lastError = OutsideText.escaped("\(error)")
        try? state.save(to: dataDirectory)
        await finish(DetectionOutcome(finished: clock.now(), result: nil, error: error))
        return error
    }

    /// When the next run will happen: the timer's time, or later when the budget allows no run
    /// then. `nil` when the timer is not running.
    package func nextDetection() -> UnixTime? {
        guard let scheduled = state.nextDetection else { return nil }
        return settings.schedule.nextRun(now: scheduled, delay: .zero, counted: budget.load(now: clock.now()), defaultConfiguration)
    }

    /// The timer: sleeps `interval ± jitter` between runs until cancelled. Refused and failed runs
    /// are logged and recorded; the timer goes on.
    package func runOnTimer() async {
        // No key server, no timer: nothing to download.
        guard canDownload else { return }
        while !Task.isCancelled {
            // A spent budget moves the run to when it is allowed, rather than letting it be refused.
            let now = clock.now()
            let next = settings.schedule.nextRun(now: now, delay: nextDelay(), counted: budget.load(now: now), defaultConfiguration)
            let delay = Duration.seconds(max(0, next.seconds - now.seconds))
            state.nextDetection = next
            try? state.save(to: dataDirectory)
            do {
                try await timerClock.sleep(for: delay)
            } catch {
                return
            }
            do {
                try await runNow()
            } catch {
                logger.warning("scheduled detection did not run", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The next timer delay: the interval, moved by a random amount within the jitter.
    func nextDelay() -> Duration {
        let schedule = settings.schedule
        var generator = RandomSourceGenerator(random)
        return schedule.timerDelay(offset: schedule.jitterSeconds.map { Int64.random(in: $0, using: &generator) } ?? 0)
    }

    // MARK: - Private

    /// Fetches the health authority's configuration. A server that cannot be reached leaves the
    /// last fetched one in use; one that answers with something unreadable fails the run, since
    /// scoring with a configuration the authority did not mean is worse than not scoring.
    private func refreshConfiguration(from url: String, downloader: KeyFileDownloader) async throws(DetectionWorkerError) {
        let bytes: [UInt8]
        do {
            bytes = try await downloader.fetch(url, limit: RemoteConfiguration.maximumBytes)
        } catch {
            guard RemoteConfiguration.cached(in: dataDirectory) != nil else {
                throw .configurationDownload(error)
            }
            logger.warning("exposure configuration not fetched; the last one stays in use", metadata: ["url": "\(url)", "error": "\(error)"])
            return
        }
        do {
            defaultConfiguration = try RemoteConfiguration.accept(bytes, in: dataDirectory)
        } catch {
            throw .detection("exposure configuration \(url): \(error)")
        }
    }

    private func perform(
        configuration: ExposureConfiguration, results: ExposureResults, downloader: KeyFileDownloader
    ) async -> Result<(DetectionRun, [String]), DetectionWorkerError> {
        do {
            let pending = try await downloader.pendingFiles()
            // The index's Date may have shown the clock wrong: nothing is matched or kept on it.
            if let distrust = clock.distrust { throw DetectionWorkerError.clockUntrusted(distrust) }
            // Each file goes to the spool on disk as it arrives and is read back when the pipeline
            // needs it: a run of many files holds one archive at a time, not all of them.
            var spool = try DownloadSpool(dataDirectory: dataDirectory)
            defer { spool.clear() }
            var files = [KeyFileSource]()
            for url in pending {
                try Task.checkCancellation()
                files.append(try spool.keep(try await downloader.download(url), name: url))
            }
            state.lastDownload = clock.now()
            let pipeline = DetectionPipeline(
                reader: ContactLogReader(dataDirectory: dataDirectory), policy: policy, parallelism: settings.parallelism)
            let observer = self.observer
            let run = try await pipeline.run(sources: files, configuration: configuration, now: clock.now(), results: results) { done, total in
                observer?.detectionProgress(keysDone: done, keysTotal: total)
            }
            try Task.checkCancellation()
            return .success((run, pending))
        } catch let error as ClientError {
            return .failure(.download(error))
        } catch let error as DetectionWorkerError {
            return .failure(error)
        } catch is CancellationError {
            return .failure(.deadlineExceeded(after: settings.deadline))
        } catch let error as DetectionError {
            if case .cancelled = error { return .failure(.deadlineExceeded(after: settings.deadline)) }
            return .failure(.detection("\(error)"))
        } catch {
            return .failure(.detection("\(error)"))
        }
    }

    /// Runs `body` and cancels it when the deadline passes first.
    private func withDeadline(
        _ body: @escaping @Sendable () async -> Result<(DetectionRun, [String]), DetectionWorkerError>
    ) async -> Result<(DetectionRun, [String]), DetectionWorkerError> {
        let deadline = settings.deadline
        let deadlineClock = deadlineClock
        return await withTaskGroup(of: Result<(DetectionRun, [String]), DetectionWorkerError>?.self) { group in
            group.addTask { await body() }
            group.addTask {
                do {
                    try await deadlineClock.sleep(for: deadline)
                } catch {
                    return nil
                }
                return .failure(.deadlineExceeded(after: deadline))
            }
            var outcome: Result<(DetectionRun, [String]), DetectionWorkerError> = .failure(.deadlineExceeded(after: deadline))
            for await next in group {
                guard let next else { continue }
                outcome = next
                break
            }
            group.cancelAll()
            return outcome
        }
    }

    private func finish(_ outcome: DetectionOutcome) async {
        var outcome = outcome
        outcome.answer = exposureAnswer()
        if let error = outcome.error {
            logger.error("exposure detection failed", metadata: ["error": "\(error)"])
        } else if let result = outcome.result {
            // The journal line: counts only, never a key or an identifier; a warning, naming the
            // refused files, when not every file was checked.
            var metadata: Logger.Metadata = [
                "keys": "\(result.statistics.keys)", "matchedKeys": "\(result.statistics.matchedKeys)",
                "newResults": "\(result.statistics.newResults)", "revisions": "\(result.statistics.revisions)",
                "windows": "\(result.windows.count)", "exposedDays": "\(result.exposureDays.count)",
            ]
            if let refusals = result.refusals {
                metadata["refused"] = "\(refusals)"
                logger.warning("exposure detection finished, but not every key file was checked", metadata: metadata)
            } else {
                logger.notice("exposure detection finished", metadata: metadata)
            }
        }
        await observer?.detectionFinished(outcome)
    }
}
