// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Testing

/// A terminal of a known size, as a person's: a tmux server of our own (its own socket, no user
/// configuration) running each command in a pane of `columns` × `rows`, and the screen it left.
/// For the outputs whose look is the point (bar charts, what fits a line).
package final class TerminalFixture {
    package let socket: String
    private let directory: TemporaryDirectory
    /// The server, in the foreground (`-D`): our child, ended by its PID. A daemonized server
    /// would be nobody's, and the client that forks it is not reliably reaped by Foundation.
    private let server: Process
    private var sessions = 0

    package init() throws {
        directory = try TemporaryDirectory()
        socket = directory.path + "/tmux.sock"
        // The pane stays after its command ends, so that its last screen can be read.
        try "set -g remain-on-exit on\nset -g history-limit 5000\n".write(toFile: directory.path + "/tmux.conf", atomically: true, encoding: .utf8)
        server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        server.arguments = ["-S", socket, "-f", directory.path + "/tmux.conf", "-u", "-D"]
        server.standardInput = FileHandle.nullDevice
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        let socket = socket
        try eventually("tmux's socket") { FileManager.default.fileExists(atPath: socket) }
    }

    /// Runs `command` (argv) in a fresh pane of `columns` × `rows`, waits (bounded) until it ends,
    /// and returns the screen and the scrollback, lines without their trailing blanks.
    package func screen(of command: [String], columns: Int = 100, rows: Int = 50) throws -> [String] {
        sessions += 1
        let session = "s\(sessions)"
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let started = try tmux(["new-session", "-d", "-s", session, "-x", "\(columns)", "-y", "\(rows)", quoted])
        guard started.status == 0 else { throw ToolRunnerError(message: "tmux did not start the command: \(started.standardError)") }
        try eventually("the command in tmux to end") {
            try tmux(["display-message", "-t", session, "-p", "#{pane_dead}"]).standardOutput == "1\n"
        }
        let captured = try tmux(["capture-pane", "-t", session, "-p", "-S", "-", "-E", "-"])
        _ = try? tmux(["kill-session", "-t", session])
        return captured.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop { $0 == " " }.reversed())
        }
    }

    private func tmux(_ arguments: [String]) throws -> ToolRun {
        try ToolRunner.runProgram("/usr/bin/tmux", ["-S", socket, "-u"] + arguments, limit: 30)
    }

    deinit {
        // SIGKILL: the server inherits Foundation's blocked signals, so it would not hear SIGTERM
        // (nor reap its panes, which are over by now).
        if server.isRunning { kill(server.processIdentifier, SIGKILL) }
        server.waitForExit()
    }
}
