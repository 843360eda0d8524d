// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Foundation
import Glibc
import SystemCalls

/// HAProxy in front of key-server replicas on 127.0.0.1, configured as docs/keyserver.md tells a
/// region to: round robin per request, X-Forwarded-For appended, connections to the replicas
/// from 127.0.0.2 (their --trusted-proxy). Ended by its PID.
final class BenchBalancer {
    let process = Process()
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    init(haproxy: String, replicas: [Int], work: String) throws {
        port = try LoopbackPort.free()
        let servers = replicas.enumerated().map { "    server replica\($0.offset) 127.0.0.1:\($0.element) source 127.0.0.2" }
        let configuration = """
            global
                maxconn 4096
            defaults
                mode http
                timeout connect 2s
                timeout client 30s
                timeout server 30s
                timeout http-request 5s
                timeout http-keep-alive 30s
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
        try configuration.write(toFile: work + "/haproxy.cfg", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: haproxy)
        process.arguments = ["-db", "-f", work + "/haproxy.cfg"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Up once it accepts a connection: a bounded number of 10 ms looks.
        for _ in 0..<500 where process.isRunning {
            if LoopbackPort.accepts(port) { return }
            usleep(10_000)
        }
        stop()
        throw ValidationError("\(haproxy) did not listen on 127.0.0.1:\(port)")
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
