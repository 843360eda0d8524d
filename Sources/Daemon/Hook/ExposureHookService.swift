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

    package func run() async throws {
        let (looks, look) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in worker.changes.updates() { look.yield() }
                }
                group.addTask { await midnights(look) }
                // The one task that decides, and the one owner of the trigger.
                var trigger = HookTrigger(told: Self.load(from: dataDirectory))
                for await _ in looks {
                    await consider(&trigger)
                }
                group.cancelAll()
            }
        }
    }

    /// A look at each UTC midnight of the wall clock (a step is caught up by the next run's look).
    private func midnights(_ look: AsyncStream<Void>.Continuation) async {
        while !Task.isCancelled {
            let now = clock.now()
            let midnight = UTCDay(containing: now).advanced(by: 1).start
            let wait = Duration.milliseconds(max(1000, midnight.milliseconds - now.milliseconds + 1000))
            guard (try? await monotonic.sleep(for: wait)) != nil else { return }
            look.yield()
        }
    }

    private func consider(_ trigger: inout HookTrigger) async {
        guard clock.distrust == nil, await runner.isConfigured else { return }
        // Results lost to a damaged file are being matched again: an answer without the days the
        // owner was told of is not news, and the days told stay as they were (issue 40).
        guard await !worker.resultsRebuilding else { return }
        let answer = await worker.exposureAnswer()
        let before = trigger.told
        let decided = trigger.consider(answer.days)
        if trigger.told != before { save(trigger.told) }
        guard let (event, newDays) = decided else { return }
        logger.notice("exposure hook due", metadata: ["event": "\(event.rawValue)", "days": "\(answer.days.count)", "newDays": "\(newDays.count)"])
        await runner.submit(Self.run(event: event, answer: answer, newDays: newDays, now: clock.now()))
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
