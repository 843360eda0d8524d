// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
package import Logging
import SystemCalls

/// One run of the exposure hook: what it is told.
package struct HookRun: Sendable, Equatable {
    package var event: HookTrigger.Event
    /// The GAEND_* variables: the program's whole environment.
    package var environment: [String: String]
    /// The answer as JSON, on the program's standard input.
    package var json: [UInt8]
}

/// Runs the exposure hook: exec'd without a shell (`ChildProcess`), in a process group of its own,
/// with only its GAEND_* variables and the JSON on standard input (a socket, written whole at
/// once). Its end is learnt by reaping its PID, not from its descriptors, so a grandchild it left
/// behind neither delays the end nor keeps the output reader busy; at the time limit, or when the
/// run is cancelled (a stop), its whole group is killed. Its status and the first line it wrote go
/// to the journal. The caller (`ExposureHookService`) runs one at a time and decides, from the
/// outcome, whether the owner was told.
package actor ExposureHookRunner {
    /// The first line of output kept for the journal, at most this long.
    static let outputLimit = 4096

    private var settings: HookSettings?
    private let monotonic: any Clock<Duration>
    private let logger: Logger
    /// Runs finished since start, and how the last ended (for tests and the journal).
    package private(set) var finished = 0
    package private(set) var lastOutcome: HookOutcome?

    package enum HookOutcome: Sendable, Equatable {
        case exited(Int32, firstLine: String)
        /// Ended by a signal it was not sent by gaend.
        case signalled(Int32, firstLine: String)
        case killed(after: Duration)
        case notStarted(String)

        /// Whether the owner was told: only a run that exited 0.
        package var told: Bool {
            if case .exited(0, _) = self { return true }
            return false
        }
    }

    package init(settings: HookSettings?, monotonic: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "gaend.hook")) {
        self.settings = settings
        self.monotonic = monotonic
        self.logger = logger
    }

    /// Whether a hook is configured: without one nothing is decided or kept, so a hook configured
    /// later is told the exposure days there are then.
    package var isConfigured: Bool { settings != nil }

    /// A reload: the next run uses these (a run under way finishes with the old).
    package func configure(_ settings: HookSettings?) {
        self.settings = settings
    }

    /// Runs the hook with `run` and returns how it ended; `.notStarted` when none is configured.
    package func run(_ run: HookRun) async -> HookOutcome {
        guard let settings else { return .notStarted("no exposure hook is configured") }
        let outcome = await Self.execute(run, settings: settings, monotonic: monotonic, logger: logger)
        finished += 1
        lastOutcome = outcome
        return outcome
    }

    private static func execute(_ run: HookRun, settings: HookSettings, monotonic: any Clock<Duration>, logger: Logger) async -> HookOutcome {
        let input: (ours: Int32, theirs: Int32)
        let output: (ours: Int32, theirs: Int32)
        do {
            input = try socketPair()
            output = try socketPair()
        } catch {
            logger.warning("exposure hook not run", metadata: ["program": "\(settings.program)", "error": "\(error)"])
            return .notStarted("\(error)")
        }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                program: settings.program, environment: run.environment, directory: "/", input: input.theirs, output: output.theirs)
        } catch {
            for end in [input.ours, input.theirs, output.ours, output.theirs] { SystemCall.close(end) }
            logger.warning("exposure hook could not be started", metadata: ["program": "\(settings.program)", "error": "\(error)"])
            return .notStarted("\(error)")
        }
        // The child has its copies: ours of its ends go, so the output ends when the last
        // process holding it does.
        SystemCall.close(input.theirs)
        SystemCall.close(output.theirs)
        // The answer, whole: a few hundred bytes, far under the socket's buffer; MSG_NOSIGNAL if
        // the program exits without reading.
        _ = run.json.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(input.ours, raw) } }
        SystemCall.close(input.ours)
        let reader = OutputReader(descriptor: output.ours)
        let (ends, ended) = AsyncStream<ChildProcess.Ending>.makeStream()
        let waiter = Thread {
            SystemCall.nameThisThread("gaend-hook-wait")
            ended.yield(child.waitForEnd())
            ended.finish()
        }
        waiter.start()
        let killer = Task {
            guard (try? await monotonic.sleep(for: settings.timeout)) != nil else { return false }
            child.killGroup()
            return true
        }
        // A stop kills the group too, so that it never waits on the hook; the day stays untold.
        let ending = await withTaskCancellationHandler {
            var ending = ChildProcess.Ending.exited(-1)
            for await value in ends { ending = value }
            return ending
        } onCancel: {
            child.killGroup()
        }
        killer.cancel()
        reader.programExited()
        let firstLine = await reader.firstLine()
        if await killer.value {
            logger.warning(
                "exposure hook killed with its process group: it ran past its time limit",
                metadata: ["program": "\(settings.program)", "limit": "\(settings.timeout)", "ending": "\(ending)"])
            return .killed(after: settings.timeout)
        }
        let metadata: Logger.Metadata = ["program": "\(settings.program)", "event": "\(run.event.rawValue)", "ending": "\(ending)", "output": "\(firstLine)"]
        switch ending {
        case .exited(0):
            logger.notice("exposure hook ran", metadata: metadata.merging(["status": "0"]) { $1 })
            return .exited(0, firstLine: firstLine)
        case .exited(let status):
            logger.warning("exposure hook failed", metadata: metadata.merging(["status": "\(status)"]) { $1 })
            return .exited(status, firstLine: firstLine)
        case .signalled(let signal):
            logger.warning("exposure hook failed", metadata: metadata)
            return .signalled(signal, firstLine: firstLine)
        }
    }

    private static func socketPair() throws(Errno) -> (ours: Int32, theirs: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try SystemCall.retrying { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) }
        return (ends[0], ends[1])
    }
}

/// Reads a hook's output on a thread of its own, keeping the first line (at most 4 KiB) and
/// dropping the rest, so a talkative program never blocks on a full socket. It ends at the end of
/// the output, or when told the program has exited (a child the program left behind may hold the
/// socket open): then it takes what is already there, at most `drainLimit` bytes more (a
/// grandchild that keeps writing once spun this thread at 90 % of a core), and stops.
final class OutputReader: Sendable {
    /// What is read after the program exited before the reader stops.
    static let drainLimit = 64 * 1024
    private let done: AsyncStream<String>
    private let wake: WakeChannel?

    init(descriptor: Int32) {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        done = stream
        let wake = try? WakeChannel()
        self.wake = wake
        try? SystemCall.setNonBlocking(descriptor)
        let thread = Thread {
            SystemCall.nameThisThread("gaend-hook")
            var kept: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var exited = false
            var drained = 0
            // Each read follows a poll of the output and the wake: a program (or a grandchild)
            // that never stops writing cannot keep the end from being seen.
            reading: while true {
                if !exited {
                    let waitFor = [(descriptor, PollEvents.readable)] + (wake.map { [($0.descriptor, PollEvents.readable)] } ?? [])
                    guard let ready = try? SystemCall.poll(waitFor, milliseconds: -1) else { continue }
                    if ready.count > 1, !ready[1].isEmpty { exited = true }
                }
                switch buffer.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try SystemCall.read(descriptor, into: raw) } }) {
                case .success(0): break reading
                case .success(let count):
                    if kept.count < ExposureHookRunner.outputLimit { kept += buffer.prefix(min(count, ExposureHookRunner.outputLimit - kept.count)) }
                    if exited {
                        drained += count
                        if drained >= OutputReader.drainLimit { break reading }
                    }
                case .failure(.wouldBlock):
                    if exited { break reading }
                case .failure:
                    break reading
                }
            }
            SystemCall.close(descriptor)
            let line = kept.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first.map { Array($0) } ?? []
            continuation.yield(String(decoding: line, as: UTF8.self))
            continuation.finish()
        }
        thread.start()
    }

    /// The program exited: what it wrote is there; stop once it is read.
    func programExited() { wake?.wake() }

    func firstLine() async -> String {
        for await line in done { return line }
        return ""
    }
}
