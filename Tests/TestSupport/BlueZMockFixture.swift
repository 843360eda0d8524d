// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// python-dbusmock with the project's bluetoothd-like template (testbed/bluez_template.py) on a
/// private bus. The mock can be stopped and started again under a running client, as bluetoothd
/// restarting would. Ended by its PID when the value goes.
package final class BlueZMockFixture: @unchecked Sendable {
    // @unchecked: `mock` is replaced only by `start()`/`stop()`, which the test calls in sequence.
    package let bus: DBusDaemonFixture
    private var mock: Process?

    /// The venv's python, from `make check` (GAEND_DBUSMOCK_PYTHON) or the default place.
    package static var python: String? {
        if let path = ProcessInfo.processInfo.environment["GAEND_DBUSMOCK_PYTHON"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        let local = BumbleFixture.root.appendingPathComponent(".venv-dbusmock/bin/python").path
        return FileManager.default.isExecutableFile(atPath: local) ? local : nil
    }

    package init() throws {
        bus = try DBusDaemonFixture()
        try start()
    }

    /// Starts the mock and returns once it owns org.bluez.
    package func start() throws {
        guard let python = Self.python else { throw ToolRunnerError(message: "no dbusmock venv: run make test-peers") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-m", "dbusmock", "--system", "-t", BumbleFixture.root.appendingPathComponent("testbed/bluez_template.py").path]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        mock = process
        for _ in 0..<200 {
            let owned = try ToolRunner.runProgram(
                "/usr/bin/busctl",
                ["--address=\(bus.address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s", "org.bluez"])
            if owned.standardOutput.hasPrefix("b true") { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        stop()
        throw ToolRunnerError(message: "the BlueZ mock did not take org.bluez")
    }

    /// Ends the mock (SIGKILL: bluetoothd crashing; the bus announces its name has no owner).
    package func stop() {
        if let mock, mock.isRunning {
            kill(mock.processIdentifier, SIGKILL)
            mock.waitForExit()
        }
        mock = nil
    }

    deinit { stop() }
}
