// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// A private `dbus-daemon` for one test: its own socket in a fresh directory, a configuration that
/// lets everyone own, send and receive (or the one given), ended by its PID when the value goes.
package final class DBusDaemonFixture: @unchecked Sendable {
    // @unchecked: set in init, read-only after.
    let process: Process
    package let directory: String
    /// `unix:path=...`, for DBUS_SYSTEM_BUS_ADDRESS or `busctl --address`.
    package let address: String
    /// Something the bus configuration refers to (an included file's directory), kept alive with it.
    private let kept: AnyObject?

    package static let allowAll = """
        <busconfig>
          <type>system</type>
          <listen>unix:path=@SOCKET@</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus"/>
          </policy>
        </busconfig>
        """

    /// - Parameter configuration: a bus configuration with `@SOCKET@` where the socket path goes.
    package init(configuration: String = DBusDaemonFixture.allowAll, keeping kept: AnyObject? = nil) throws {
        self.kept = kept
        let directory = FileManager.default.temporaryDirectory.path + "/gaend-bus-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        self.directory = directory
        let socket = directory + "/bus.sock"
        let configPath = directory + "/bus.conf"
        try configuration.replacingOccurrences(of: "@SOCKET@", with: socket).write(toFile: configPath, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(configPath)", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = output.firstLine()
        guard let line = text.split(separator: "\n").first, line.hasPrefix("unix:") else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw ToolRunnerError(message: "dbus-daemon did not start: \(text)")
        }
        address = String(line)
    }

    package var isRunning: Bool { process.isRunning }

    /// Ends the bus. SIGKILL: a child of Foundation's Process inherits the test runner's blocked
    /// signal mask, so SIGTERM would wait in the queue forever.
    package func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitForExit()
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension ToolRunner {
    /// `runProgram` on a thread of its own, so the waiting does not hold one of the few threads
    /// the tasks answering the program (exported D-Bus objects) need.
    package static func runProgramDetached(_ path: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> ToolRun {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try runProgram(path, arguments, environment: environment) })
            }
            thread.start()
        }
    }
}
