// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
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
        // The program's end (its pidfd) and its output, on one reader; the time limit raced
        // against them. A stop (this task cancelled) kills the group by PID and still awaits the
        // end, so a run never outlives gaend.
        let end = HookEnd()
        do {
            _ = try DescriptorThread(name: "gaend-hook", work: try HookWatch(child: child, output: output.ours, end: end))
        } catch {
            // No pidfd or thread: the group is killed and reaped here, blocking only for that.
            child.killGroup()
            _ = child.waitForEnd()
            SystemCall.close(output.ours)
            logger.warning("exposure hook could not be watched; killed", metadata: ["program": "\(settings.program)", "error": "\(error)"])
            return .notStarted("\(error)")
        }
        let timedOut = await withTaskCancellationHandler {
            await withTaskGroup(of: Bool?.self) { group -> Bool in
                group.addTask {
                    await end.wait()
                    return nil
                }
                // True at the limit; false when stopped.
                group.addTask { (try? await monotonic.sleep(for: settings.timeout)) != nil }
                var timedOut = false
                while let result = await group.next() {
                    guard let limit = result else { break }
                    timedOut = limit
                    child.killGroup()
                }
                group.cancelAll()
                return timedOut
            }
        } onCancel: {
            child.killGroup()
        }
        let (ending, firstLine) = end.value ?? (.exited(-1), "")
        if timedOut {
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

/// How a run ended, once its reader knows: the ending and the first line of output. Waited for
/// without cancellation: a stopped run's end is still awaited, after its group was killed.
final class HookEnd: Sendable {
    private let state = ConditionLock<(ChildProcess.Ending, String)?>(nil)

    var value: (ChildProcess.Ending, String)? { state.withLock { $0 } }

    func set(_ ending: ChildProcess.Ending, firstLine: String) { state.withLock { $0 = (ending, firstLine) } }

    func wait() async { await state.wait(cancellable: false) { $0 != nil } }
}

/// Watches one run of the hook on its reader (a `DescriptorThread`): the program's end by its
/// pidfd, not its descriptors, so a grandchild it left behind neither delays the end nor keeps the
/// reader busy; its output, keeping the first line (at most 4 KiB) and dropping the rest, so a
/// talkative program never blocks on a full socket. Once the program has ended it takes what is
/// already there, at most `drainLimit` bytes more (a grandchild that keeps writing once spun a
/// reader at 90 % of a core), and tells the ending and the first line.
final class HookWatch: DescriptorWork {
    /// What is read after the program exited before the reader stops.
    static let drainLimit = 64 * 1024
    let child: ChildProcess
    let output: Int32
    let end: Int32
    let done: HookEnd
    var kept: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    var outputOpen = true
    var ending: ChildProcess.Ending?

    /// Takes `output`; closes it, and the pidfd it opens, at its end.
    init(child: ChildProcess, output: Int32, end done: HookEnd) throws(Errno) {
        end = try child.endDescriptor()
        try? SystemCall.setNonBlocking(output)
        self.child = child
        self.output = output
        self.done = done
    }

    func nextWait() -> DescriptorThread.Wait {
        DescriptorThread.Wait(outputOpen ? [(end, .readable), (output, .readable)] : [(end, .readable)])
    }

    func handle(_ turn: DescriptorThread.Turn) -> Bool {
        if !turn.events[0].isEmpty, let ended = child.reapIfEnded() {
            ending = ended
            // What is already written, within the limit, then the end.
            var drained = 0
            while outputOpen, drained < Self.drainLimit, let count = read() { drained += count }
            return false
        }
        if outputOpen, turn.events.count > 1, !turn.events[1].isEmpty { _ = read() }
        return true
    }

    /// One read of the output: its size, or nil when nothing more is there now (or ever).
    private func read() -> Int? {
        switch buffer.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try SystemCall.read(output, into: raw) } }) {
        case .success(0):
            outputOpen = false
            return nil
        case .success(let count):
            if kept.count < ExposureHookRunner.outputLimit { kept += buffer.prefix(min(count, ExposureHookRunner.outputLimit - kept.count)) }
            return count
        case .failure(.interrupted):
            return 0
        case .failure(.wouldBlock):
            return nil
        case .failure:
            outputOpen = false
            return nil
        }
    }

    func finish() {
        SystemCall.close(output)
        SystemCall.close(end)
        let line = kept.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first.map { Array($0) } ?? []
        // Ended without an end (the reader could not wait): the group is killed and reaped, so no
        // program is left behind.
        if ending == nil {
            child.killGroup()
            ending = child.waitForEnd()
        }
        done.set(ending ?? .exited(-1), firstLine: String(decoding: line, as: UTF8.self))
    }
}
