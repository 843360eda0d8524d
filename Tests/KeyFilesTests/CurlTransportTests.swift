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

/// Issue 47, item 2: a verification or publish POST that the server redirects is not sent again,
/// to any origin; a download that began over https is not redirected to plain http (apt's rule).
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct RedirectTests {
    @Test func aPostThatIsRedirectedIsNotSentAgain() async throws {
        let honest = try HTTPFixture()
        let elsewhere = try HTTPFixture()
        for status in [301, 302, 303, 307, 308] {
            try await honest.set([
                "/api/verify": HTTPFixture.Route(status: status, headers: ["Location": elsewhere.baseURL + "/api/verify"])
            ])
            try await elsewhere.set(["/api/verify": .json(#"{"token": "t", "testtype": "confirmed"}"#)])
            let client = VerificationClient(
                verifyURL: honest.baseURL + "/api/verify", certificateURL: honest.baseURL + "/api/certificate", apiKey: "device-key",
                transport: CurlTransport(), timeout: .seconds(20))
            await #expect {
                _ = try await client.verify(code: "12345678")
            } throws: { error in
                guard case .redirected(_, status, let location) = error as? ClientError else { return false }
                return location == elsewhere.baseURL + "/api/verify"
                    && "\(error)".contains("not followed: a code, keys or a certificate go only to the configured URL")
            }
        }
        // The code and the device's API key never reached the other server.
        #expect(try await elsewhere.requests().isEmpty)
        #expect(try await honest.requests().count == 5)
    }

    @Test func aDownloadOverHTTPFollowsItsRedirects() async throws {
        let first = try HTTPFixture()
        let second = try HTTPFixture()
        try await first.set(["/index.txt": HTTPFixture.Route(status: 302, headers: ["Location": second.baseURL + "/index.txt"])])
        try await second.set(["/index.txt": .text("a.zip")])
        let response = try await CurlTransport().send(HTTPRequest(url: first.baseURL + "/index.txt", maximumResponseBytes: 1 << 10))
        #expect(response.status == 200 && response.body == Array("a.zip".utf8))
    }

    /// The rule itself; that libcurl is told it (REDIR_PROTOCOLS "https") is `CurlTransport`'s
    /// switch on it, and the refusal's name is `HTTPError.insecureRedirect`.
    @Test func whichRedirectsARequestFollows() {
        #expect(HTTPRequest(method: "POST", url: "https://keys.example/v1/publish", maximumResponseBytes: 1).redirects == .none)
        #expect(HTTPRequest(method: "PUT", url: "http://keys.example/x", maximumResponseBytes: 1).redirects == .none)
        #expect(HTTPRequest(url: "https://keys.example/index.txt", maximumResponseBytes: 1).redirects == .httpsOnly)
        #expect(HTTPRequest(url: "HTTPS://keys.example/index.txt", maximumResponseBytes: 1).redirects == .httpsOnly)
        #expect(HTTPRequest(method: "HEAD", url: "http://keys.example/index.txt", maximumResponseBytes: 1).redirects == .httpOrHttps)
        #expect(
            "\(HTTPError.insecureRedirect(url: "https://a/index.txt", location: "http://b/index.txt"))"
                == "https://a/index.txt: redirected to http://b/index.txt, which is not https: not followed (a download that began over https stays on https)")
    }
}
