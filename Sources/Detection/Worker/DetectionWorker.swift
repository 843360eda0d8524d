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
/// A run: configuration → budget → index of pending files → download → verify → parse → match →
/// windows → scores → stored (`DetectionStore`) → observer and journal line. Runs never overlap;
/// each has a deadline (the BGTask expiration handler) after which it is cancelled and its error
/// recorded. A failed run gives its budget back and marks no file processed, so the next run
/// downloads them again. What the worker keeps is the store's; the rules of when it runs are
/// `DetectionSchedule`'s.
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

    /// What detection keeps and shows.
    package nonisolated let store: DetectionStore
    private let dataDirectory: DataDirectory
    /// Nil without a key server (`index-url`): the worker then only keeps and ages the stored
    /// results, which are the owner's answer whether a server is configured or not.
    private let downloader: KeyFileDownloader?
    /// Whether runs can download key files (a key server is configured).
    package nonisolated let canDownload: Bool
    private let policy: SignaturePolicy
    private let clock: any WallClock
    /// Where the timer's waits and the run's deadline pass (the continuous clock; a test's clock).
    private let timerClock: any Clock<Duration>
    private let deadlineClock: any Clock<Duration>
    /// Where the timer's jitter is drawn.
    private let random: any RandomBytesSource
    private let observer: (any DetectionObserver)?
    private let settings: Settings
    private let logger: Logger
    private var running = false

    package init(
        dataDirectory: DataDirectory, downloader: KeyFileDownloader?, policy: SignaturePolicy, defaultConfiguration: ExposureConfiguration,
        clock: any WallClock, timerClock: any Clock<Duration> = ContinuousClock(), deadlineClock: any Clock<Duration> = ContinuousClock(),
        random: any RandomBytesSource = SystemRandom(), observer: (any DetectionObserver)? = nil,
        settings: Settings = Settings(), configurationURL: String? = nil,
        logger: Logger = Logger(label: "gaend.detection")
    ) {
        store = DetectionStore(
            dataDirectory: dataDirectory, configuration: defaultConfiguration, configurationURL: configurationURL, schedule: settings.schedule,
            clock: clock, logger: logger)
        self.dataDirectory = dataDirectory
        self.downloader = downloader
        canDownload = downloader != nil
        self.policy = policy
        self.clock = clock
        self.timerClock = timerClock
        self.deadlineClock = deadlineClock
        self.random = random
        self.observer = observer
        self.settings = settings
        self.logger = logger
    }

    /// Signalled when the store publishes a new snapshot.
    package nonisolated var changes: Changes { store.changes }

    /// Runs a detection now, with `configuration` or the configured one.
    ///
    /// - Throws: `.busy` while another run is in progress, `.rateLimited` when the budget is spent
    ///   (with the time of the next allowed run), or the run's own failure.
    @discardableResult
    package func runNow(configuration given: ExposureConfiguration? = nil) async throws(DetectionWorkerError) -> DetectionResult {
        guard let downloader else { throw .noKeyServer }
        guard !running else { throw .busy }
        // Running from here on, before the first await: the actor takes other calls while this
        // one waits for the configuration or the index, and two runs at once share downloads/
        // and the results (issue 40: the second's spool cleared the first's files, which were
        // then marked processed as empty, and the exposure was never found again).
        running = true
        defer { running = false }
        do throws(DetectionWorkerError) {
            if given == nil, let url = await store.configurationURL {
                // A run that fails before it starts is still a failed run: LastDetectionError names
                // the configuration and its key, and DetectionFinished says so.
                try await refreshConfiguration(from: url, downloader: downloader)
            }
            if clock.distrust != nil {
                // The key server's answer is a witness to the clock (its Date): asked for the index
                // first, which may be all the clock needed. Nothing else is done on an untrusted clock.
                _ = try? await downloader.index()
                if let distrust = clock.distrust { throw .clockUntrusted(distrust) }
            }
        } catch {
            throw await failed(error)
        }
        let configuration: ExposureConfiguration
        if let given { configuration = given } else { configuration = await store.configuration }
        let reservation: UnixTime
        do {
            reservation = try await store.reserve(for: configuration)
        } catch .rateLimited(let next) {
            throw .rateLimited(nextAllowed: next)
        } catch {
            throw await failed(error)
        }
        let store = store
        let outcome = await RunDeadline(settings.deadline, clock: deadlineClock).run { () async throws(DetectionWorkerError) in
            try await self.perform(configuration: configuration, results: await store.results, downloader: downloader)
        }
        switch outcome {
        case .success(let (run, pending)):
            // Only the files matched are processed. A refused file (a bad signature, an unknown
            // key, an invalid archive, an incomplete batch) is tried again at every run, so that a
            // trusted key fixed or added, or a batch completed, matches it; until then every run
            // says it was refused (issue 46).
            let matched = Set(run.result.files.filter(\.verdict.isVerified).map(\.name)).subtracting(run.deferredFiles)
            let answer: ExposureAnswer
            do {
                answer = try await store.commit(
                    run, processedFiles: pending.filter { matched.contains($0) }, reservation: reservation, scoredWith: given)
            } catch {
                throw await failed(error)
            }
            await finish(DetectionOutcome(finished: clock.now(), result: run.result, error: nil), answer: answer)
            return run.result
        case .failure(let error):
            await store.giveBack(reservation)
            throw await failed(error)
        }
    }

    /// The timer: sleeps `interval ± jitter` between runs until cancelled. Refused and failed runs
    /// are logged and recorded; the timer goes on.
    package func runOnTimer() async {
        // No key server, no timer: nothing to download.
        guard canDownload else { return }
        while !Task.isCancelled {
            // A spent budget moves the run to when it is allowed, rather than letting it be refused.
            let now = clock.now()
            let next = await store.nextRun(delay: nextDelay())
            await store.schedule(next)
            do {
                try await timerClock.sleep(for: .seconds(max(0, next.seconds - now.seconds)))
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
    /// last fetched one in use; one that answers with something unreadable fails the run.
    private func refreshConfiguration(from url: String, downloader: KeyFileDownloader) async throws(DetectionWorkerError) {
        let bytes: [UInt8]
        do {
            bytes = try await downloader.fetch(url, limit: RemoteConfiguration.maximumBytes)
        } catch {
            guard await store.hasFetchedConfiguration else { throw .configurationDownload(error) }
            logger.warning("exposure configuration not fetched; the last one stays in use", metadata: ["url": "\(url)", "error": "\(error)"])
            return
        }
        try await store.accept(configuration: bytes, from: url)
    }

    /// Downloads the pending files to the spool and matches them: the run without its bookkeeping.
    private func perform(
        configuration: ExposureConfiguration, results: ExposureResults, downloader: KeyFileDownloader
    ) async throws(DetectionWorkerError) -> (DetectionRun, [String]) {
        let index: [String]
        do {
            index = try await downloader.index()
        } catch {
            throw .download(error)
        }
        // The index's Date may have shown the clock wrong: nothing is matched or kept on it.
        if let distrust = clock.distrust { throw .clockUntrusted(distrust) }
        let pending = try await store.pending(index)
        // Each file goes to the spool on disk as it arrives and is read back when the pipeline
        // needs it: a run of many files holds one archive at a time, not all of them.
        var spool = try DownloadSpool(dataDirectory: dataDirectory)
        defer { spool.clear() }
        var files = [KeyFileSource]()
        for url in pending {
            if Task.isCancelled { throw .deadlineExceeded(after: settings.deadline) }
            let bytes: [UInt8]
            do {
                bytes = try await downloader.download(url)
            } catch {
                throw .download(error)
            }
            files.append(try spool.keep(bytes, name: url))
        }
        await store.downloaded()
        let pipeline = DetectionPipeline(reader: ContactLogReader(dataDirectory: dataDirectory), policy: policy, parallelism: settings.parallelism)
        let observer = self.observer
        let run: DetectionRun
        do {
            run = try await pipeline.run(sources: files, configuration: configuration, now: clock.now(), results: results) { done, total in
                observer?.detectionProgress(keysDone: done, keysTotal: total)
            }
        } catch .cancelled {
            throw .deadlineExceeded(after: settings.deadline)
        } catch {
            throw .pipeline(error)
        }
        if Task.isCancelled { throw .deadlineExceeded(after: settings.deadline) }
        return (run, pending)
    }

    /// Records a run that failed (LastDetectionError, the journal, DetectionFinished); the error,
    /// to throw.
    private func failed(_ error: DetectionWorkerError) async -> DetectionWorkerError {
        let answer = await store.fail(error)
        await finish(DetectionOutcome(finished: clock.now(), result: nil, error: error), answer: answer)
        return error
    }

    private func finish(_ outcome: DetectionOutcome, answer: ExposureAnswer) async {
        var outcome = outcome
        outcome.answer = answer
        DetectionJournal(logger: logger).record(outcome)
        await observer?.detectionFinished(outcome)
    }
}
