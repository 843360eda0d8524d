// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
package import ContactLog
package import Logging
import ServiceLifecycle
import Synchronization
import SystemCalls

/// Keeps the clock's verdict current and acts on it: a step of the wall clock is noticed when it
/// happens (`WallClockSteps`, no polling), the kernel's synchronization is looked at slowly (a
/// time daemon that slews into sync says nothing), and once the clock is trusted the sightings
/// held on the boot clock are re-timed into the contact log.
package struct ClockService: Service {
    /// How often the kernel is asked while the clock is not trusted, and while it is (the kernel
    /// itself gives up synchronization only after hours without a time daemon).
    package static let untrustedLook: Duration = .seconds(60)
    package static let trustedLook: Duration = .seconds(600)

    let board: ClockTrustBoard
    let held: HeldSightings?
    let log: ContactLogWriter
    /// Where the slow looks wait (the continuous clock; a test's).
    let monotonic: any Clock<Duration>
    /// Whether to watch the kernel for steps (a test steps its own clock and calls `stepped`).
    let watchSteps: Bool
    let logger: Logger

    package init(
        board: ClockTrustBoard, held: HeldSightings?, log: ContactLogWriter, monotonic: any Clock<Duration> = ContinuousClock(), watchSteps: Bool = true,
        logger: Logger = Logger(label: "gaend.clock")
    ) {
        self.board = board
        self.held = held
        self.log = log
        self.monotonic = monotonic
        self.watchSteps = watchSteps
        self.logger = logger
    }

    package func run() async throws {
        let steps = watchSteps ? Self.watchKernel(logger: logger) : nil
        defer { steps?.watch.stop() }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let steps {
                    group.addTask {
                        // Each step's looks run as children here: a later step's series takes
                        // over, and an earlier one ends at its next wake.
                        let latest = LatestStep()
                        await withDiscardingTaskGroup { looks in
                            for await _ in steps.events {
                                let verdict = board.stepped()
                                logger.notice(
                                    "the wall clock was set", metadata: ["trusted": "\(verdict.trusted)", "reason": "\(verdict.distrust ?? "")"])
                                let series = latest.next()
                                looks.addTask { await lookSoonAfterAStep { latest.current == series } }
                            }
                            looks.cancelAll()
                        }
                    }
                }
                group.addTask { await lookAtTheKernel() }
                group.addTask { await followTrust() }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Judges again every minute while untrusted, every ten while trusted.
    private func lookAtTheKernel() async {
        while !Task.isCancelled {
            let wait = board.verdict.trusted ? Self.trustedLook : Self.untrustedLook
            guard (try? await monotonic.sleep(for: wait)) != nil else { return }
            board.reevaluate()
        }
    }

    /// A time daemon that steps the clock says it is synchronized in the same breath or at its
    /// next update: the kernel is asked 1, 2, 4 … 32 s after a step, until the clock is trusted.
    private func lookSoonAfterAStep(while current: @Sendable () -> Bool) async {
        for delay in [1, 2, 4, 8, 16, 32] {
            guard (try? await monotonic.sleep(for: .seconds(delay))) != nil, current() else { return }
            if board.reevaluate().trusted { return }
        }
    }

    /// Says each change of trust once, and re-times the held sightings once the clock is trusted.
    private func followTrust() async {
        var said: Bool?
        for await _ in board.changes.updates() {
            let verdict = board.verdict
            if said != verdict.trusted {
                said = verdict.trusted
                if let distrust = verdict.distrust {
                    logger.warning("the clock is not trusted: nothing is broadcast, kept or deleted by it", metadata: ["reason": "\(distrust)"])
                } else {
                    logger.notice("the clock is trusted", metadata: ["offset.ms": "\(verdict.offsetMilliseconds)", "policy": "\(board.policy.rawValue)"])
                }
            }
            guard verdict.trusted, let held else { continue }
            do {
                try await held.release(adding: board.bootToWall(), into: log)
            } catch {
                logger.error("re-timing the held sightings; they stay held", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A reader that waits for the kernel to say the clock was set, and its events.
    private static func watchKernel(logger: Logger) -> (watch: DescriptorThread, events: AsyncStream<Void>)? {
        let (events, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        do {
            let reader = try DescriptorThread(name: "gaend-clock", work: StepReading(steps: try WallClockSteps(), continuation: continuation, logger: logger))
            return (reader, events)
        } catch {
            logger.error("clock steps cannot be watched; they are noticed at the next look", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Each set of the clock, from the timerfd to the stream.
    private final class StepReading: DescriptorWork {
        let steps: WallClockSteps
        let continuation: AsyncStream<Void>.Continuation
        let logger: Logger

        init(steps: WallClockSteps, continuation: AsyncStream<Void>.Continuation, logger: Logger) {
            self.steps = steps
            self.continuation = continuation
            self.logger = logger
        }

        func nextWait() -> DescriptorThread.Wait { DescriptorThread.Wait([(steps.descriptor, .readable)]) }

        func handle(_ turn: DescriptorThread.Turn) -> Bool {
            guard !turn.events[0].isEmpty else { return true }
            do {
                if try steps.consume() { continuation.yield() }
                return true
            } catch {
                logger.error("watching for clock steps stopped", metadata: ["error": "\(error)"])
                return false
            }
        }

        func finish() { continuation.finish() }
    }
}

/// The number of the latest step, so the looks after an earlier one know they are outdated.
private final class LatestStep: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }

    var current: Int { count.withLock { $0 } }
}
