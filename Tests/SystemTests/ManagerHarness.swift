// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// A gaend with Manager1 on a private bus (its DBUS_SYSTEM_BUS_ADDRESS), and gaenctl against it.
final class ManagerHarness: @unchecked Sendable {
    // @unchecked: `daemon` is replaced only by the test's own sequential calls.
    let bus: DBusDaemonFixture
    let directory: TemporaryDirectory
    var daemon: Process
    /// How the current gaend ended, once `stop()` saw it end.
    private(set) var exit: ChildExit?
    let arguments: [String]
    let extraEnvironment: [String: String]
    /// A program gaend is started through (`timeout N`), which execs it with the same signals.
    let launcher: [String]

    init(
        bus: DBusDaemonFixture? = nil, environment: [String: String] = [:], directory: TemporaryDirectory? = nil, launcher: [String] = [],
        _ arguments: [String]
    ) throws {
        self.bus = try bus ?? DBusDaemonFixture()
        self.directory = try directory ?? TemporaryDirectory()
        self.arguments = arguments
        self.launcher = launcher
        extraEnvironment = environment
        daemon = Process()
        try start()
    }

    var stderrPath: String { "\(directory.path)/gaend.stderr" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment.merge(extraEnvironment) { $1 }
        return environment
    }

    /// Starts gaend and waits (bounded) until `gaenctl status` reaches it.
    func start() throws {
        daemon = Process()
        exit = nil
        let gaend = try ToolRunner.productsDirectory().appendingPathComponent("gaend")
        daemon.executableURL = launcher.first.map { URL(fileURLWithPath: $0) } ?? gaend
        // The kernel of a development machine or CI runner is not synchronized (adjtimex says
        // TIME_ERROR): the test vouches for its clock, as the owner of an RTC would.
        let clock = arguments.contains("--clock") ? [] : ["--clock", "system"]
        daemon.arguments = Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [gaend.path]) + ["--data-dir", "\(directory.path)/data"] + clock + arguments
        daemon.environment = environment
        daemon.standardOutput = FileHandle.nullDevice
        if !FileManager.default.fileExists(atPath: stderrPath) { _ = FileManager.default.createFile(atPath: stderrPath, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        handle.seekToEndOfFile()
        daemon.standardError = handle
        try daemon.run()
        for _ in 0..<200 {
            if try ctl(["status"]).status == 0 { return }
            guard daemon.isRunning else { break }
            usleep(50_000)
        }
        Issue.record("gaend did not come up on the bus:\n\(stderr)")
        throw CancellationError()
    }

    /// gaenctl with `--bus` pointing at the private bus (added after the subcommand path).
    func ctl(_ arguments: [String]) throws -> ToolRun {
        try ToolRunner.run("gaenctl", arguments + ["--bus", bus.address])
    }

    func json(_ arguments: [String]) throws -> Any? {
        let run = try ctl(arguments + ["--json"])
        return try? JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8))
    }

    func status() throws -> [String: Any] { try json(["status"]) as? [String: Any] ?? [:] }

    /// gaend's PID: the launcher's child when there is a launcher (timeout(1) waits for it and
    /// exits with its status).
    var gaendProcess: pid_t {
        let pid = daemon.processIdentifier
        guard !launcher.isEmpty, let children = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8),
            let child = children.split(separator: " ").first.flatMap({ pid_t($0) })
        else { return pid }
        return child
    }

    /// SIGTERM, and how gaend ended.
    @discardableResult
    func stop() -> ChildExit? {
        if exit == nil, daemon.isRunning {
            kill(gaendProcess, SIGTERM)
            exit = daemon.waitForExit()
        }
        return exit
    }

    deinit {
        if exit == nil, daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
    }
}
