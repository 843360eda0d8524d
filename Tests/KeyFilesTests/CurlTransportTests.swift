// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// Issue 40, items 10 and 11, on the transport itself against a real server on loopback: the
/// request's time limit is a hard limit on the whole exchange (a trickle does not reset it), and a
/// cancelled task gives up its transfer within about a second. Before, URLSession's wait ignored
/// cancellation and only its idle timeout acted, so a trickle was downloaded for ever.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct CurlTransportTests {
    static func attempt(_ request: HTTPRequest) async -> Result<HTTPResponse, HTTPError> {
        do {
            return .success(try await CurlTransport().send(request))
        } catch {
            return .failure(error)
        }
    }

    @Test func aTrickleIsGivenUpAtTheTimeLimit() async throws {
        let server = try HTTPFixture()
        try await server.set(["/slow.zip": HTTPFixture.Route(body: Array(repeating: 0x41, count: 400), trickleSeconds: 0.2)])
        let started = ContinuousClock.now
        let outcome = await Self.attempt(HTTPRequest(url: server.baseURL + "/slow.zip", timeout: .seconds(1), maximumResponseBytes: 1 << 20))
        let took = ContinuousClock.now - started
        guard case .failure(.timedOut) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        // The whole trickle takes 80 s; given up at 1 s (a generous bound for CI's loaded cores).
        #expect(took < .seconds(30), "\(took)")
    }

    @Test func aCancelledRequestEndsItsTransfer() async throws {
        let server = try HTTPFixture()
        try await server.set(["/index.txt": HTTPFixture.Route(body: Array("1.zip\n".utf8), held: true)])
        let request = Task {
            await Self.attempt(HTTPRequest(url: server.baseURL + "/index.txt", timeout: .seconds(110), maximumResponseBytes: 1 << 20))
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        request.cancel()
        let outcome = await request.value
        // At once here; a generous bound for CI's loaded cores, far under the request's own 110 s
        // (the held request is released after 120 s), which a cancel that is not heard waits for.
        #expect(ContinuousClock.now - cancelled < .seconds(30))
        guard case .failure(.transport(_, let reason)) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(reason == "cancelled")
        try await server.release("/index.txt")
    }

    @Test func aBodyOverItsCapIsRefusedWhetherDeclaredOrNot() async throws {
        let server = try HTTPFixture()
        try await server.set([
            "/declared": HTTPFixture.Route(body: Array(repeating: 1, count: 5000)),
            "/chunked": HTTPFixture.Route(body: Array(repeating: 1, count: 60), trickleSeconds: 0.001),
        ])
        for path in ["/declared", "/chunked"] {
            let outcome = await Self.attempt(HTTPRequest(url: server.baseURL + path, timeout: .seconds(10), maximumResponseBytes: 50))
            guard case .failure(.responseTooLarge(_, 50)) = outcome else {
                Issue.record("\(path): \(outcome)")
                continue
            }
        }
        let fine = try await CurlTransport().send(HTTPRequest(url: server.baseURL + "/declared", timeout: .seconds(10), maximumResponseBytes: 5000))
        #expect(fine.status == 200 && fine.body.count == 5000)
        #expect(fine.headers["content-length"] == "5000")
    }
}
