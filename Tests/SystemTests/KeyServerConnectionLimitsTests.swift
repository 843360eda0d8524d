// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// gaen-keyserver's timeouts, connection cap, rate limits and access log, from raw TCP clients on
/// loopback, with the limits set small by their options. The waits are bounded by the clients' own
/// 10 s reads; no test depends on how fast the server is, only on what it answers.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerConnectionLimitsTests {
    typealias Client = KeyServerNetworkBoundsTests.Client

    /// A request whose head or body does not arrive in time is answered 408 and closed.
    @Test(arguments: [
        "POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\"",
        "GET /configuration.json HTTP/1.1\r\nHost: x\r\nX-Slow: ",
    ])
    func aSlowRequestIsAnswered408(_ partial: String) throws {
        try KeyServerNetworkBoundsTests.withServer(["--request-timeout", "1"]) { port in
            let client = try Client(port: port)
            client.send(partial)
            KeyServerNetworkBoundsTests.expectRefused(client, 408)
        }
    }

    /// A connection that sends nothing, or nothing after its response, is closed without a word.
    @Test func anIdleConnectionIsClosed() throws {
        try KeyServerNetworkBoundsTests.withServer(["--idle-timeout", "1", "--first-byte-timeout", "1"]) { port in
            let silent = try Client(port: port)
            let (nothing, closed) = silent.readToEnd()
            #expect(nothing.isEmpty)
            #expect(closed)
            let kept = try Client(port: port)
            kept.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\n\r\n")
            let (text, keptClosed) = kept.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 200 ") && text.contains("Connection: keep-alive\r\n"))
            #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2)
            #expect(keptClosed)
        }
    }

    /// Issue 47: a new connection that sends nothing is closed at the first-byte timeout, sooner
    /// than a kept-alive one that has been served, which may wait the idle timeout.
    @Test func aSilentNewConnectionIsClosedAtTheFirstByteTimeout() throws {
        try KeyServerNetworkBoundsTests.withServer(["--first-byte-timeout", "1", "--idle-timeout", "60"]) { port in
            let silent = try Client(port: port)
            let started = ContinuousClock.now
            let (nothing, closed) = silent.readToEnd()
            #expect(nothing.isEmpty && closed)
            #expect(ContinuousClock.now - started < .seconds(4))
            let kept = try Client(port: port)
            kept.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\n\r\n")
            // Served, then kept open past the first-byte timeout: the client's own 5 s read ends it.
            let (text, keptClosed) = kept.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 200 "))
            #expect(!keptClosed)
        }
    }

    /// Issue 47: one client (an address) holds at most --max-connections-per-client; its next
    /// connection gets 503 and is closed, while another address is served.
    @Test func oneClientPastItsOwnCapIsRefusedAndOthersServed() throws {
        try KeyServerNetworkBoundsTests.withServer(["--max-connections-per-client", "3", "--first-byte-timeout", "60"]) { port in
            let held = try (0..<3).map { _ in try Client(port: port, source: "127.0.0.2") }
            for client in held { client.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\n") }
            held[0].send("\r\n")
            var buffer = [UInt8](repeating: 0, count: 4096)
            #expect(recv(held[0].fd, &buffer, buffer.count, 0) > 0)
            let refused = try Client(port: port, source: "127.0.0.2")
            let (text, closed) = refused.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 503 "), "\(text)")
            #expect(closed)
            let other = try Client(port: port, source: "127.0.0.3")
            other.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(other.readToEnd().text.hasPrefix("HTTP/1.1 200 "))
        }
    }

    /// Past --max-connections a new connection gets 503 and is closed; once the others are gone,
    /// new connections are served again.
    @Test func connectionsPastTheCapAreRefused() throws {
        try KeyServerNetworkBoundsTests.withServer(["--max-connections", "4"]) { port in
            var held = try (0..<4).map { _ in try Client(port: port) }
            for client in held { client.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\n") }
            // The four are being served once one of them answers a complete request.
            held[0].send("\r\n")
            var buffer = [UInt8](repeating: 0, count: 4096)
            #expect(recv(held[0].fd, &buffer, buffer.count, 0) > 0)
            let refused = try Client(port: port)
            let (text, closed) = refused.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 503 "), "\(text)")
            #expect(text.contains("Retry-After: 1\r\n"))
            #expect(closed)
            held.removeAll()  // closes them
            try eventually("a free connection") {
                let client = try Client(port: port)
                client.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return client.readToEnd().text.hasPrefix("HTTP/1.1 200 ")
            }
        }
    }

    /// Over HTTP a spent budget is 429 with Retry-After and X-RateLimit-Limit.
    @Test func aSpentBudgetIs429WithRetryAfter() throws {
        try KeyServerNetworkBoundsTests.withServer(["--requests-per-minute", "2"]) { port in
            var statuses = [String]()
            var last = ""
            for _ in 0..<3 {
                let client = try Client(port: port)
                client.send("POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                last = client.readToEnd().text
                statuses.append(String(last.prefix(12)))
            }
            #expect(statuses == ["HTTP/1.1 400", "HTTP/1.1 400", "HTTP/1.1 429"])
            #expect(last.hasPrefix("HTTP/1.1 429 Too Many Requests\r\n"))
            // 30 s for the one token back (2 per minute), less if a second turned between the requests.
            let retryAfter = last.components(separatedBy: "\r\nRetry-After: ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
            #expect((20...30).contains(retryAfter ?? 0), "\(last)")
            #expect(last.contains("\r\nX-RateLimit-Limit: 2\r\n"))
            #expect(last.contains(#""errorCode":"rate_limited""#))
        }
    }

    /// One access-log line per request, refused ones too, with the client, method, path and
    /// status; never a code, an API key, a query or a body; nothing a client sends can start a line.
    @Test func theAccessLogHasALinePerRequestAndNoSecret() throws {
        let log = try TemporaryDirectory()
        try KeyServerNetworkBoundsTests.withServer(errors: log.path + "/stderr") { port in
            let verify = try Client(port: port)
            let body = #"{"code":"87654321"}"#
            verify.send(
                "POST /api/verify HTTP/1.1\r\nHost: x\r\nX-API-Key: device-key\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            )
            #expect(verify.readToEnd().text.hasPrefix("HTTP/1.1 400 "))
            let query = try Client(port: port)
            query.send("GET /exports/index.txt?token=SECRETTOKEN HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(query.readToEnd().text.hasPrefix("HTTP/1.1 404 "))
            let quoted = try Client(port: port)
            quoted.send("GET /a\"b\\x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(quoted.readToEnd().text.hasPrefix("HTTP/1.1 404 "))
            let escaped = try Client(port: port)
            escaped.send("GET /a\u{1B}[31m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            KeyServerNetworkBoundsTests.expectRefused(escaped, 400)
            let huge = try Client(port: port)
            huge.send("GET /" + String(repeating: "a", count: 10_000) + " HTTP/1.1\r\n")
            KeyServerNetworkBoundsTests.expectRefused(huge, 414)
        }
        let text = try String(contentsOfFile: log.path + "/stderr", encoding: .utf8)
        let lines = text.split(separator: "\n").filter { $0.contains("gaen-keyserver.access") || $0.contains("127.0.0.1 \"") }
        #expect(lines.contains { $0.contains(#"127.0.0.1 "POST /api/verify" 400 "#) }, "\(text)")
        #expect(lines.contains { $0.contains(#"127.0.0.1 "GET /exports/index.txt" 404 "#) }, "\(text)")
        #expect(lines.contains { $0.contains(#"127.0.0.1 "GET /a\x22b\x5cx" 404 "#) }, "\(text)")
        #expect(lines.contains { $0.contains(#"127.0.0.1 "- -" 400 "#) }, "\(text)")
        #expect(lines.contains { $0.contains(#"127.0.0.1 "- -" 414 "#) }, "\(text)")
        for secret in ["87654321", "device-key", "SECRETTOKEN", "\u{1B}"] { #expect(!text.contains(secret), "\(secret) in the log") }
    }
}
