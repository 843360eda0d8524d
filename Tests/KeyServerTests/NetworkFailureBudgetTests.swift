// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import InMemoryLogging
import KeyServer
import Logging
import Testing

/// Issue 53, item 5: failed attempts counted per IPv6 /56 and /48 as well as per client (a /64),
/// and server-wide per minute; when the server's budget is spent, clients it has not seen are
/// refused at /api/verify and the journal says so. Before, 2,000 /64s of one /48 made 59,970
/// guesses in 49 s, each within its /64's own budget.
@Suite(.ownThreads) struct NetworkFailureBudgetTests {
    /// The /64 `index` of 2001:db8:7::/48, `index / 256` its /56.
    static func client(_ index: Int) -> String { "2001:db8:7:\(String(index, radix: 16))::/64" }

    static func guess(_ server: RateLimitTests.Server, from client: String, _ guess: Int = 0) async -> KeyServerAPI.Response {
        await server.post("/api/verify", #"{"code":"\#(String(format: "%08d", 10_000_000 + guess))"}"#, from: client)
    }

    @Test func theKeysOfAClientAreItsNetworks() {
        #expect(
            FailureLevels.keys(for: "2001:db8:7:1a2b::/64").map(\.1) == ["2001:db8:7:1a2b::/64", "2001:db8:7:1a00::/56", "2001:db8:7::/48", "*"])
        #expect(FailureLevels.keys(for: "192.0.2.7").map(\.1) == ["192.0.2.7", "*"])
    }

    @Test func aSlash56AndASlash48HaveBudgetsOfTheirOwn() async throws {
        let server = try RateLimitTests.Server { $0.failuresServerWide = RateLimit(tokens: 1_000_000, interval: 60) }
        // The 256 /64s of one /56, two wrong codes each: 300 are answered, the rest refused for
        // the /56 (each /64 alone would have had 30).
        var statuses = [Int: Int]()
        var lastBody = [UInt8]()
        for round in 0..<2 {
            for index in 0..<256 {
                let response = await Self.guess(server, from: Self.client(index), round)
                statuses[response.status, default: 0] += 1
                lastBody = response.body
            }
        }
        #expect(statuses == [400: 300, 429: 212])
        #expect(String(decoding: lastBody, as: UTF8.self).contains(#"too many failed attempts from this client's \/56"#))
        // The /64s of 11 other /56s of the /48, one each: 2,700 more are answered, then the /48's
        // budget (3,000) is spent.
        statuses = [:]
        for subnet in 1...11 {
            for host in 0..<256 { statuses[await Self.guess(server, from: Self.client(subnet * 256 + host)).status, default: 0] += 1 }
        }
        #expect(statuses == [400: 2700, 429: 116])
        // Another /48 is not touched.
        #expect(await Self.guess(server, from: "2001:db8:8::/64").status == 400)
        // An hour on, the networks may try again.
        server.clock.advance(seconds: 3600)
        #expect(await Self.guess(server, from: Self.client(1)).status == 400)
    }

    @Test func aSpentServerWideBudgetRefusesNewcomersAndSaysSo() async throws {
        let logs = InMemoryLogHandler()
        let server = try RateLimitTests.Server(
            configure: { $0.failuresServerWide = RateLimit(tokens: 600, interval: 60) }, logger: Logger(label: "limits", factory: { _ in logs }))
        let code = try await server.issueCode()
        // A client seen before the flood, with one wrong code of its own.
        #expect(await Self.guess(server, from: "198.51.100.1").status == 400)
        // 700 IPv4 addresses, one wrong code each, in the same second: 599 more are answered.
        var statuses = [Int: Int]()
        for index in 0..<700 { statuses[await Self.guess(server, from: "10.1.\(index / 256).\(index % 256)").status, default: 0] += 1 }
        #expect(statuses == [400: 599, 429: 101])
        // Logged once, however many are refused.
        let warnings = logs.entries.filter { $0.level == .warning && "\($0.message)".contains("server-wide budget of failed attempts is spent") }
        #expect(warnings.count == 1)
        // The client seen before keeps its own budget; a newcomer, even with the right code, waits.
        #expect(await Self.guess(server, from: "198.51.100.1", 1).status == 400)
        let newcomer = await server.post("/api/verify", #"{"code":"\#(code)"}"#, from: "203.0.113.9")
        #expect(newcomer.status == 429 && newcomer.headers["Retry-After"] != nil)
        // A minute on, the server's budget has refilled: the right code is taken.
        server.clock.advance(seconds: 60)
        #expect(await server.post("/api/verify", #"{"code":"\#(code)"}"#, from: "203.0.113.9").status == 200)
    }
}
