// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Foundation
import Glibc

/// How often an idle gaend wakes: the release gaend beside this program, `--radio none`, serving
/// Manager1 on a private dbus-daemon (or, with `--bluez-mock`, its beacon on the BlueZ mock's
/// hci0 with the default scan and rotation timers), counted by its threads' context switches
/// (voluntary and not, from /proc/PID/task/*/status) over a stretch after it is ready. Every
/// wake-up of a thread that sleeps is one switch, so this is what a wearable's battery sees of it.
struct IdleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle", abstract: "Wake-ups per second of an idle gaend (--radio none, Manager1 on a private bus).")

    @Option(help: "Seconds to count over, after gaend is ready.")
    var seconds = 30

    @Option(help: "A python with python-dbusmock: run the beacon on testbed/bluez_template.py's hci0 instead of --radio none.")
    var bluezMock: String?

    @Option(help: "gaend's clock key: synchronized (an unsynchronized kernel: looked at once a minute) or system (trusted: every 10 min).")
    var clock = "synchronized"

    @Option(help: "The gaend to measure (default: the one beside this program).")
    var gaend = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gaend").path

    func run() async throws {
        let bus = try PrivateBus()
        defer { withExtendedLifetime(bus) {} }
        let address = bus.address
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gaen-bench-idle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // An empty configuration: the defaults, whatever /etc/gaend holds on this machine.
        let configuration = scratch.appendingPathComponent("gaend.conf")
        try Data().write(to: configuration)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: gaend)
        daemon.arguments = ["--config", configuration.path, "--bus", address, "--data-dir", scratch.appendingPathComponent("data").path, "--clock", clock]
        var mock: Process?
        defer {
            if let mock {
                kill(mock.processIdentifier, SIGKILL)
                mock.waitUntilExit()
            }
        }
        if let bluezMock {
            mock = try Self.startMock(python: bluezMock, bus: address)
            daemon.arguments! += ["--radio", "bluez:hci0", "--enable", "true"]
            daemon.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": address]) { $1 }
        } else {
            daemon.arguments! += ["--radio", "none"]
        }
        daemon.standardOutput = FileHandle.nullDevice
        let log = Pipe()
        daemon.standardError = log
        try daemon.run()
        defer {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        // Ready: it has said it is on the bus.
        var said = ""
        while !said.contains("on the bus") {
            let chunk = log.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                print("idle: gaend ended before it was ready: \(said)")
                throw ExitCode.failure
            }
            said += String(decoding: chunk, as: UTF8.self)
        }
        // What follows is drained so that a line it writes never blocks it.
        let drain = Thread { while !log.fileHandleForReading.availableData.isEmpty {} }
        drain.start()
        // Let start-up settle: the first announcements, and libdispatch's idle pool threads, which
        // end after a few seconds (a thread that ends while counted takes its count with it).
        try await Task.sleep(for: .seconds(8))
        let before = Self.contextSwitches(of: daemon.processIdentifier)
        let clock = ContinuousClock()
        let start = clock.now
        try await Task.sleep(for: .seconds(seconds))
        let elapsed = Figures.seconds(start.duration(to: clock.now))
        let after = Self.contextSwitches(of: daemon.processIdentifier)
        var total = 0
        var lines = [String]()
        for (thread, count) in after.sorted(by: { $0.key < $1.key }) {
            let woke = count.switches - (before[thread]?.switches ?? 0)
            total += woke
            lines.append("  thread \(thread) \(count.name): \(woke)")
        }
        print(
            "idle gaend (\(bluezMock == nil ? "--radio none" : "bluez:hci0 on the BlueZ mock"), Manager1 on a private bus): \(total) context switches in \(Figures.decimals(elapsed, 1)) s,"
                + " \(Figures.decimals(Double(total) / elapsed, 2)) wake-ups a second; \(after.count) threads (\(before.count) before)")
        for line in lines { print(line) }
    }

    /// The bluetoothd-like mock on `bus`, owning org.bluez, with an adapter hci0.
    static func startMock(python: String, bus: String) throws -> Process {
        let mock = Process()
        mock.executableURL = URL(fileURLWithPath: python)
        mock.arguments = ["-m", "dbusmock", "--system", "-t", FileManager.default.currentDirectoryPath + "/testbed/bluez_template.py"]
        mock.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": bus]) { $1 }
        mock.standardOutput = FileHandle.nullDevice
        mock.standardError = FileHandle.nullDevice
        try mock.run()
        for _ in 0..<200 {
            if Self.busctl(bus, ["call", "org.bluez", "/", "org.bluez.Mock", "AddAdapter", "ss", "hci0", "gaen-bench"]) { return mock }
            usleep(50_000)
        }
        kill(mock.processIdentifier, SIGKILL)
        print("idle: the BlueZ mock did not take org.bluez")
        throw ExitCode.failure
    }

    static func busctl(_ bus: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/busctl")
        process.arguments = ["--address=\(bus)"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Each thread's name and context switches, voluntary and not, by thread id.
    static func contextSwitches(of pid: pid_t) -> [Int: (name: String, switches: Int)] {
        var threads = [Int: (name: String, switches: Int)]()
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            guard let id = Int(task), let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            var name = ""
            var switches = 0
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                if parts[0] == "Name" { name = parts[1] }
                if parts[0].hasSuffix("ctxt_switches") { switches += Int(parts[1]) ?? 0 }
            }
            threads[id] = (name, switches)
        }
        return threads
    }
}
