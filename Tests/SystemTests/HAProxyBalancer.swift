// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import SystemCalls
import Testing

/// HAProxy from Debian in front of key-server replicas on loopback, as a region deploys them:
/// round robin per request, `X-Forwarded-For` appended (`option forwardfor`), connections to the
/// replicas from 127.0.0.2 (their `--trusted-proxy`), a TCP check every 200 ms that takes a dead
/// replica out, and a request that finds one dead sent to another (`option redispatch`); a request
/// head must arrive within 5 s and one source holds at most 32 connections (issue 47), as
/// docs/keyserver.md configures it. Ended by its PID when released.
final class HAProxyBalancer {
    /// GAEND_HAPROXY when set (make check sets it, so a missing HAProxy fails instead of
    /// skipping), else Debian's when installed.
    static var binary: String? {
        if let path = ProcessInfo.processInfo.environment["GAEND_HAPROXY"], !path.isEmpty { return path }
        return FileManager.default.isExecutableFile(atPath: "/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : nil
    }
    static let unavailable = "no HAProxy: install haproxy or set GAEND_HAPROXY (make check does)"

    let process = Process()
    let port: Int
    let log: String

    var base: String { "http://127.0.0.1:\(port)" }

    init(replicas: [Int], directory: String) throws {
        guard let binary = Self.binary else { throw ToolRunnerError(message: Self.unavailable) }
        port = try LoopbackPort.free()
        let servers = replicas.enumerated().map { "    server replica\($0.offset) 127.0.0.1:\($0.element) source 127.0.0.2 check inter 200ms fall 1 rise 2" }
        let configuration = """
            global
                maxconn 1024
            defaults
                mode http
                timeout connect 2s
                timeout client 30s
                timeout server 30s
                timeout http-request 5s
                timeout http-keep-alive 30s
                retries 3
                option redispatch
                option forwardfor
            frontend keyserver
                bind 127.0.0.1:\(port)
                stick-table type ipv6 size 1m expire 60s store conn_cur
                tcp-request connection track-sc0 src
                tcp-request connection reject if { sc0_conn_cur gt 32 }
                default_backend replicas
            backend replicas
                balance roundrobin
            \(servers.joined(separator: "\n"))

            """
        let path = directory + "/haproxy.cfg"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        log = directory + "/haproxy.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: binary)
        // -db: in the foreground, no daemon, so the PID is HAProxy's own.
        process.arguments = ["-db", "-f", path]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardError = process.standardOutput
        try process.run()
        let port = port
        try eventually("HAProxy to listen on \(port)", explain: { (try? String(contentsOfFile: self.log, encoding: .utf8)) ?? "" }) {
            guard process.isRunning else { throw ToolRunnerError(message: "HAProxy exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")") }
            return LoopbackPort.accepts(port)
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }
}
