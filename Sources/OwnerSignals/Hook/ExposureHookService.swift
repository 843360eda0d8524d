// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
package import Detection
package import ENCore
import Foundation
package import Logging
import ServiceLifecycle
package import Storage

/// Decides when the exposure hook runs: after each change of the detection worker (a run, a new
/// configuration) and at each UTC midnight (the day an exposure ages out), the answer is asked for
/// and `HookTrigger` says whether it adds a day or lost the last. The days told are kept in
/// `<data-dir>/exposure-hook.json`. Nothing is decided on a clock that cannot be trusted.
package struct ExposureHookService: Service {
    package static let fileName = "exposure-hook.json"

    let worker: DetectionWorker
    let runner: ExposureHookRunner
    let clock: any WallClock
    let monotonic: any Clock<Duration>
    let dataDirectory: DataDirectory
    let logger: Logger

    package init(
        worker: DetectionWorker, runner: ExposureHookRunner, clock: any WallClock, monotonic: any Clock<Duration> = ContinuousClock(),
        dataDirectory: DataDirectory, logger: Logger = Logger(label: "gaend.hook")
    ) {
        self.worker = worker
        self.runner = runner
        self.clock = clock
        self.monotonic = monotonic
        self.dataDirectory = dataDirectory
        self.logger = logger
    }

    /// Why the decider looks: a change of the worker or a midnight, or a retry that is due (the
    /// number of the failure that scheduled it: an older one's is stale).
    enum Look: Sendable {
        case change
        case retry(Int)
    }

    package func run() async throws {
        let (looks, look) = AsyncStream<Look>.makeStream(bufferingPolicy: .bufferingNewest(2))
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in worker.changes.updates() { look.yield(.change) }
                }
                group.addTask { await midnights(look) }
                // The one task that decides, the one owner of the trigger, and the one caller of
                // the runner: a run at a time, awaited here (a stop cancels it, which kills its
                // process group and awaits its end), and the next look takes the newest answer.
                var trigger = HookTrigger(told: Self.load(from: dataDirectory))
                var retry = HookRetry()
                var scheduled = 0
                for await reason in looks {
                    if case .retry(let number) = reason {
                        guard number == scheduled else { continue }
                        retry.due()
                    }
                    guard let (days, outcome) = await consider(&trigger, retry: retry) else { continue }
                    if outcome.told {
                        if retry.failures > 0 { logger.notice("exposure hook told the owner after failed runs", metadata: ["failures": "\(retry.failures)"]) }
                        retry.told()
                        continue
                    }
                    if Task.isCancelled { break }
                    let delay = retry.failed(days)
                    logger.warning(
                        "exposure hook did not tell the owner; the days stay untold and it runs again",
                        metadata: ["outcome": "\(outcome)", "failures": "\(retry.failures)", "retryIn": "\(delay)"])
                    // The retry's wait is a child of this group; a later failure's supersedes it.
                    scheduled += 1
                    let (number, monotonic) = (scheduled, monotonic)
                    group.addTask {
                        guard (try? await monotonic.sleep(for: delay)) != nil else { return }
                        look.yield(.retry(number))
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// A look at each UTC midnight of the wall clock (a step is caught up by the next run's look).
    private func midnights(_ look: AsyncStream<Look>.Continuation) async {
        while !Task.isCancelled {
            let now = clock.now()
            let midnight = UTCDay(containing: now).advanced(by: 1).start
            let wait = Duration.milliseconds(max(1000, midnight.milliseconds - now.milliseconds + 1000))
            guard (try? await monotonic.sleep(for: wait)) != nil else { return }
            look.yield(.change)
        }
    }

    /// Decides on the answer now; runs the hook when there is news its retry allows, and commits
    /// the days as told only when it exited 0. The days and the run's outcome, or nil when
    /// nothing was run.
    private func consider(_ trigger: inout HookTrigger, retry: HookRetry) async -> ([UTCDay], ExposureHookRunner.HookOutcome)? {
        guard clock.distrust == nil, await runner.isConfigured else { return nil }
        // Results lost to a damaged file are being matched again: an answer without the days the
        // owner was told of is not news, and the days told stay as they were (issue 40).
        let detection = await worker.store.current()
        guard !detection.resultsRebuilding else { return nil }
        let answer = detection.answer
        guard let (event, newDays) = trigger.decide(answer.days) else {
            if trigger.told != answer.days {
                trigger.commit(answer.days)
                save(trigger.told)
            }
            return nil
        }
        guard retry.allows(answer.days) else { return nil }
        logger.notice("exposure hook due", metadata: ["event": "\(event.rawValue)", "days": "\(answer.days.count)", "newDays": "\(newDays.count)"])
        let outcome = await runner.run(Self.run(event: event, answer: answer, newDays: newDays, now: clock.now()))
        if outcome.told {
            trigger.commit(answer.days)
            save(trigger.told)
        }
        return (answer.days, outcome)
    }

    /// The variables and the JSON a run is told (docs/schemas/exposure-hook.schema.json).
    package static func run(event: HookTrigger.Event, answer: ExposureAnswer, newDays: [UTCDay], now: UnixTime) -> HookRun {
        let environment = [
            "GAEND_EVENT": event.rawValue,
            "GAEND_EXPOSURE_DAYS": answer.days.map(\.description).joined(separator: " "),
            "GAEND_NEW_DAYS": newDays.map(\.description).joined(separator: " "),
            "GAEND_LAST_EXPOSURE": answer.lastExposure.map { "\($0.seconds)" } ?? "",
            "GAEND_CLASSIFICATION": answer.classification.map { "\($0.index)" } ?? "",
            "GAEND_CLASSIFICATION_NAME": answer.classification?.name ?? "",
        ]
        var object: [String: Any] = [
            "event": event.rawValue, "exposure_days": answer.days.map(\.description), "new_days": newDays.map(\.description), "time": now.seconds,
        ]
        object["last_exposure"] = answer.lastExposure.map { $0.seconds as Any } ?? NSNull()
        object["classification"] = answer.classification.map { $0.index as Any } ?? NSNull()
        object["classification_name"] = answer.classification.map { $0.name as Any } ?? NSNull()
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        let json = [UInt8](data) + [0x0A]
        return HookRun(event: event, environment: environment, json: json)
    }

    static func load(from directory: DataDirectory) -> [UTCDay] {
        guard let bytes = try? AtomicFile.read(directory.path(of: fileName), limit: 65_536),
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any], let told = object["told"] as? [String]
        else { return [] }
        return told.compactMap { ISO8601.parseDate($0).map(UTCDay.init(daysSinceEpoch:)) }
    }

    private func save(_ told: [UTCDay]) {
        let object = ["told": told.map(\.description)]
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            try AtomicFile.write(Array(data), to: dataDirectory.path(of: Self.fileName))
        } catch {
            logger.warning("the exposure hook's days could not be stored", metadata: ["error": "\(error)"])
        }
    }
}
