// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation
import Glibc

/// testbed/controllers.py: linked virtual controllers on Bumble, each on a unix socket in a fresh
/// directory. Started by the test, ended by its PID when the value goes away.
package final class BumbleFixture: @unchecked Sendable {
    // @unchecked: set in init, read-only after.
    let process: Process
    let directory: String
    /// The script's standard output: READY, then what SIGUSR2 asks for.
    let output: Pipe
    package let sockets: [String]

    /// The venv's python, from `make check` (GAEND_BUMBLE_PYTHON) or the default place.
    package static var python: String? {
        if let path = ProcessInfo.processInfo.environment["GAEND_BUMBLE_PYTHON"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        let local = root.appendingPathComponent(".venv-bumble/bin/python").path
        return FileManager.default.isExecutableFile(atPath: local) ? local : nil
    }

    package static var root: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }

    /// - Parameter socketsIn: reuse these socket paths (a controller coming back where it was).
    package init(controllers: Int, arguments: [String] = [], socketsIn existing: [String]? = nil) throws {
        guard let python = Self.python else { throw POSIXError(.ENOENT) }
        let directory = FileManager.default.temporaryDirectory.path + "/gaend-bumble-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        self.directory = directory
        sockets = existing ?? (0..<controllers).map { "\(directory)/c\($0).sock" }
        // A killed fixture leaves its socket files behind (SIGKILL runs no clean-up).
        for socket in sockets { unlink(socket) }
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [Self.root.appendingPathComponent("testbed/controllers.py").path, "--max-seconds", "120"] + arguments
            + sockets.map { "unix-server:\($0)" }
        let output = Pipe()
        self.output = output
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = output.firstLine()
        guard text.hasPrefix("READY") else {
            stop()
            throw POSIXError(.EIO)
        }
    }

    /// SIGUSR1: every controller sends its host a malformed advertising report and a Hardware
    /// Error event.
    package func injectFaults() {
        if process.isRunning { kill(process.processIdentifier, SIGUSR1) }
    }

    /// SIGUSR2: the GAEN reports each controller has sent its host so far, in order.
    package func gaenReportsSent() -> [Int]? {
        guard process.isRunning else { return nil }
        kill(process.processIdentifier, SIGUSR2)
        let line = output.firstLine()
        guard line.hasPrefix("SENT ") else { return nil }
        return line.dropFirst(5).split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
    }

    /// Ends the fixture (SIGKILL: no clean-up, as a crash would).
    package func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitForExit()
        }
    }

    deinit {
        stop()
        for socket in sockets { unlink(socket) }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
