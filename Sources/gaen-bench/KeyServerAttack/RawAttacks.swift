// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import KeyServer

/// The attacks on the HTTP layer: oversized bodies and heads, smuggling, slow clients, paths out
/// of the export directory. Each from its own loopback address.
enum RawAttacks {
    /// A 50 MB body, declared or chunked: the server answers 413 on the head (or the first chunk
    /// past 64,000 bytes), stops reading and closes; the client's sends fail long before the
    /// 50 MB are out (what they got out sat in the kernel's buffers).
    static func hugeBody(port: Int, chunked: Bool) -> AttackOutcome {
        let name = chunked ? "50 MB chunked body" : "50 MB declared body"
        guard let connection = try? RawConnection(to: port, from: chunked ? "127.0.0.12" : "127.0.0.11") else {
            return AttackOutcome(name, statuses: [0], expected: [413])
        }
        let head =
            "POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + (chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Content-Length: 50000000\r\n\r\n")
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 32_768)
        let framed = chunked ? Array("8000\r\n".utf8) + piece + Array("\r\n".utf8) : piece
        connection.send(head)
        var sent = 0
        while sent < 1_048_576, connection.send(framed) { sent += framed.count }
        let status = connection.readResponse()?.status ?? 0
        // Then the other 49 MB, as far as the server takes them.
        while sent < 50_000_000, connection.send(framed) { sent += framed.count }
        var outcome = AttackOutcome(name, statuses: [status], expected: [413])
        outcome.checks["closed after \(sent >> 20) MB"] = sent < 50_000_000
        return outcome
    }

    /// 10,000 header lines: 431.
    static func hugeHead(port: Int) -> AttackOutcome {
        guard let connection = try? RawConnection(to: port, from: "127.0.0.13") else {
            return AttackOutcome("10,000-line header", statuses: [0], expected: [431])
        }
        connection.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 10_000) + "\r\n")
        return AttackOutcome("10,000-line header", statuses: connection.readStatusesToEnd(), expected: [431])
    }

    /// A refused body holding a request, and another request after it: one 413, nothing else.
    static func smuggled(port: Int) -> AttackOutcome {
        let name = "requests pipelined after a refused body"
        guard let connection = try? RawConnection(to: port, from: "127.0.0.14") else { return AttackOutcome(name, statuses: [0], expected: [413]) }
        let smuggled = "GET /configuration.json HTTP/1.1\r\nHost: x\r\n\r\n"
        let body = smuggled + String(repeating: "a", count: 70_000 - smuggled.utf8.count)
        connection.send("POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n" + body + smuggled)
        let statuses = connection.readStatusesToEnd()
        var outcome = AttackOutcome(name, statuses: statuses, expected: [413])
        outcome.checks["one response"] = statuses.count == 1
        return outcome
    }

    /// `count` clients from one address that send a head a byte a second and never finish: the
    /// server holds as many as it lets one client hold, each answered 408 when the request timeout
    /// passes, and refuses the rest at once (503).
    static func slowClients(port: Int, count: Int, requestTimeout: Double) -> AttackOutcome {
        let name = "\(count) slow clients"
        var connections = [RawConnection]()
        for _ in 0..<count {
            guard let connection = try? RawConnection(to: port, from: "127.0.0.15", timeout: 1) else { break }
            connection.send("POST /v1/publish HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            connections.append(connection)
        }
        var statuses = [Int?](repeating: nil, count: connections.count)
        let deadline = Date().addingTimeInterval(requestTimeout + 15)
        while Date() < deadline, statuses.contains(where: { $0 == nil }) {
            var fds = connections.indices.filter { statuses[$0] == nil }.map { pollfd(fd: connections[$0].fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 1000)
            for entry in fds {
                guard let index = connections.firstIndex(where: { $0.fd == entry.fd }) else { continue }
                if entry.revents != 0 {
                    statuses[index] = connections[index].readResponse()?.status ?? 0
                } else {
                    connections[index].send("a")  // one more byte: slow, not silent
                }
            }
        }
        var outcome = AttackOutcome(name, statuses: statuses.map { $0 ?? 0 }, expected: [408, 503])
        outcome.checks["all \(count) connected"] = connections.count == count
        let perClient = HTTPLimits().connectionsPerClient
        outcome.checks["at most \(perClient) held"] = statuses.count { $0 == 408 } <= perClient
        return outcome
    }

    /// One address opens `count` connections and sends nothing (issue 47: 512 such took the server
    /// off the air, for everyone): past the per-client cap each is refused at once (503), the
    /// ones held are closed without an answer at the first-byte timeout, and meanwhile a client
    /// of another address is served.
    static func heldSockets(port: Int, count: Int) -> AttackOutcome {
        let name = "\(count) silent sockets from one address"
        // As many descriptors as the hard limit allows: the soft one is often 1,024.
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        var connections = [RawConnection]()
        for _ in 0..<count {
            guard let connection = try? RawConnection(to: port, from: "127.0.0.19", timeout: 1) else { break }
            connections.append(connection)
        }
        var served = false
        if let honest = try? RawConnection(to: port, from: "127.0.0.20") {
            honest.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            served = honest.readResponse()?.status == 200
        }
        // Each held socket's answer: a 503 at once, or nothing when the server closes it.
        var statuses = [Int?](repeating: nil, count: connections.count)
        let deadline = Date().addingTimeInterval(HTTPLimits().firstByteTimeout + 15)
        while Date() < deadline, statuses.contains(where: { $0 == nil }) {
            var fds = connections.indices.filter { statuses[$0] == nil }.map { pollfd(fd: connections[$0].fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 1000)
            for entry in fds where entry.revents != 0 {
                guard let index = connections.firstIndex(where: { $0.fd == entry.fd }) else { continue }
                statuses[index] = connections[index].readResponse()?.status ?? 0
            }
        }
        var outcome = AttackOutcome(name, statuses: statuses.map { $0 ?? -1 }, expected: [0, 503])
        outcome.checks["all \(count) connected"] = connections.count == count
        outcome.checks["another address served meanwhile"] = served
        outcome.checks["at most \(HTTPLimits().connectionsPerClient) held"] = statuses.count { $0 == 0 } <= HTTPLimits().connectionsPerClient
        return outcome
    }

    /// Paths that try to leave the export directory, or reach hidden files: 404 each.
    static func paths(port: Int) -> AttackOutcome {
        let targets = [
            "/exports/../verification.sqlite", "/exports/../../../../etc/passwd", "/exports/%2e%2e/keys.sqlite", "/exports/..%2fkeys.sqlite",
            "/exports/exposureKeyExport-XB/../../keys.sqlite", "/exports/.hidden", "/exports//etc/passwd", "/exports/./index.txt",
            "/exports/\u{00}../keys.sqlite", "/exports/..\\keys.sqlite",
        ]
        var statuses = [Int]()
        for target in targets {
            guard let connection = try? RawConnection(to: port, from: "127.0.0.18") else {
                statuses.append(0)
                continue
            }
            connection.send("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            statuses.append(connection.readResponse()?.status ?? 0)
        }
        return AttackOutcome("/exports/../ and hidden paths (\(targets.count))", statuses: statuses, expected: [400, 404])
    }
}
