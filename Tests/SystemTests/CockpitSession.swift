// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import SystemCalls
import Testing

/// Debian's `cockpit-ws` on loopback with `--local-session=cockpit-bridge`: no TLS, no login, the
/// bridge running as the user cockpit-ws runs as (root, or `nobody` through setpriv), with the
/// system bus at `bus` and the repository's `cockpit/gaend` package linked into its
/// XDG_DATA_HOME, beside Debian's base1 (cockpit.js). Ended by its PID.
final class CockpitSession {
    static var binary: String? { WebDriver.executable("GAEND_COCKPIT_WS", "/usr/lib/cockpit/cockpit-ws") }
    static let unavailable = "no cockpit-ws: install cockpit-ws and cockpit-bridge or set GAEND_COCKPIT_WS (make check does)"

    let process = Process()
    let port: Int
    let log: String

    /// The page, opened directly: without cockpit-system there is no shell around it.
    var page: String { "http://127.0.0.1:\(port)/cockpit/@localhost/gaend/index.html" }

    init(bus: String, directory: String, asNobody: Bool = false) throws {
        guard let binary = Self.binary else { throw ToolRunnerError(message: Self.unavailable) }
        port = try LoopbackPort.free()
        let home = directory + "/cockpit-\(asNobody ? "nobody" : "root")"
        for folder in ["", "/data/cockpit", "/config", "/run"] {
            try FileManager.default.createDirectory(atPath: home + folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        }
        try FileManager.default.createSymbolicLink(
            atPath: home + "/data/cockpit/gaend", withDestinationPath: BumbleFixture.root.appendingPathComponent("cockpit/gaend").path)
        log = home + "/cockpit-ws.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus
        environment["XDG_DATA_HOME"] = home + "/data"
        // Not /etc/cockpit: the machine's configuration (Origins, login) is not the test's.
        environment["XDG_CONFIG_DIRS"] = home + "/config"
        environment["XDG_RUNTIME_DIR"] = home + "/run"
        // The bridge starts a session bus and an ssh-agent when these are unset: neither is wanted.
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + home + "/run/no-session-bus"
        environment["SSH_AUTH_SOCK"] = home + "/run/no-agent"
        process.environment = environment
        let arguments = ["--address", "127.0.0.1", "--port", String(port), "--local-session=cockpit-bridge"]
        if asNobody {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardError = process.standardOutput
        try process.run()
        let port = port
        try eventually("cockpit-ws on \(port)", explain: { (try? String(contentsOfFile: self.log, encoding: .utf8)) ?? "" }) {
            guard process.isRunning else { throw ToolRunnerError(message: "cockpit-ws exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")") }
            return LoopbackPort.accepts(port)
        }
    }

    /// Ends cockpit-ws and its bridge.
    deinit { ProcessTree.end(process) }
}
