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

/// Runs the exposure hook, one at a time: a run asked for while one is under way waits, and only
/// the latest waits (it carries the newest answer). The program is exec'd without a shell, with
/// only its GAEND_* variables, the JSON on standard input (a socket, written whole at once), and
/// killed by its PID once the time limit passes; its exit status and the first line it wrote go
/// to the journal. Nothing here is awaited by detection.
package actor ExposureHookRunner {
    /// The first line of output kept for the journal, at most this long.
    static let outputLimit = 4096

    private var settings: HookSettings?
    private var running = false
    private var pending: HookRun?
    private let monotonic: any Clock<Duration>
    private let logger: Logger
    /// Runs finished since start, and how the last ended (for tests and the journal).
    package private(set) var finished = 0
    package private(set) var lastOutcome: HookOutcome?

    package enum HookOutcome: Sendable, Equatable {
        case exited(Int32, firstLine: String)
        case killed(after: Duration)
        case notStarted(String)
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

    package func submit(_ run: HookRun) {
        guard let settings else { return }
        if running {
            pending = run
            return
        }
        running = true
        let (monotonic, logger) = (monotonic, logger)
        Task {
            let outcome = await Self.execute(run, settings: settings, monotonic: monotonic, logger: logger)
            await self.ended(outcome)
        }
    }

    private func ended(_ outcome: HookOutcome) {
        finished += 1
        lastOutcome = outcome
        running = false
        if let next = pending {
            pending = nil
            submit(next)
        }
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: settings.program)
        process.arguments = []
        process.environment = run.environment
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        process.standardInput = FileHandle(fileDescriptor: input.theirs, closeOnDealloc: true)
        let childOutput = FileHandle(fileDescriptor: output.theirs, closeOnDealloc: true)
        process.standardOutput = childOutput
        process.standardError = childOutput
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exited.continuation.yield($0.terminationStatus) }
        do {
            try process.run()
        } catch {
            SystemCall.close(input.ours)
            SystemCall.close(output.ours)
            logger.warning("exposure hook could not be started", metadata: ["program": "\(settings.program)", "error": "\(error)"])
            return .notStarted("\(error)")
        }
        // The child's ends stay with `process` (its FileHandles close them when it goes): closing
        // them here would race Foundation over who owns the descriptor. The reader therefore
        // ends when told the program exited, not at an end of file.
        // The answer, whole: a few hundred bytes, far under the socket's buffer; MSG_NOSIGNAL if
        // the program exits without reading.
        _ = run.json.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(input.ours, raw) } }
        SystemCall.close(input.ours)
        let reader = OutputReader(descriptor: output.ours)
        let pid = process.processIdentifier
        let killer = Task {
            guard (try? await monotonic.sleep(for: settings.timeout)) != nil else { return false }
            kill(pid, SIGKILL)
            return true
        }
        var status: Int32 = -1
        for await code in exited.stream {
            status = code
            break
        }
        killer.cancel()
        reader.programExited()
        let firstLine = await reader.firstLine()
        if await killer.value {
            logger.warning(
                "exposure hook killed: it ran past its time limit", metadata: ["program": "\(settings.program)", "limit": "\(settings.timeout)"])
            return .killed(after: settings.timeout)
        }
        let metadata: Logger.Metadata = ["program": "\(settings.program)", "event": "\(run.event.rawValue)", "status": "\(status)", "output": "\(firstLine)"]
        if status == 0 {
            logger.notice("exposure hook ran", metadata: metadata)
        } else {
            logger.warning("exposure hook failed", metadata: metadata)
        }
        return .exited(status, firstLine: firstLine)
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
/// socket open): then it takes what is already there and stops.
final class OutputReader: Sendable {
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
            reading: while true {
                switch buffer.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try SystemCall.read(descriptor, into: raw) } }) {
                case .success(0): break reading
                case .success(let count):
                    if kept.count < ExposureHookRunner.outputLimit { kept += buffer.prefix(min(count, ExposureHookRunner.outputLimit - kept.count)) }
                    continue
                case .failure(.wouldBlock):
                    if exited { break reading }
                case .failure:
                    break reading
                }
                let waitFor = [(descriptor, PollEvents.readable)] + (wake.map { [($0.descriptor, PollEvents.readable)] } ?? [])
                guard let ready = try? SystemCall.poll(waitFor, milliseconds: -1) else { continue }
                if ready.count > 1, !ready[1].isEmpty { exited = true }
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
