// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyServer
import Logging
import Testing

/// Rate limits: the token buckets, their bound on memory, and the API's budgets per endpoint and
/// client and of failed attempts, with a clock the test advances.
@Suite struct RateLimitTests {
    @Test func aBucketGivesItsBurstThenOneTokenPerShare() {
        let limiter = RateLimiter(RateLimit(tokens: 3, interval: 60))
        for remaining in [2, 1, 0] {
            #expect(limiter.take("a", now: 1000) == .init(allowed: true, remaining: remaining, retryAfter: 0))
        }
        // Empty: one token comes back every 20 s.
        #expect(limiter.take("a", now: 1000) == .init(allowed: false, remaining: 0, retryAfter: 20))
        #expect(limiter.take("a", now: 1019).allowed == false)
        #expect(limiter.take("a", now: 1020).allowed)
        #expect(limiter.take("a", now: 1021) == .init(allowed: false, remaining: 0, retryAfter: 19))
        // Another key has its own bucket; a long pause fills it to the top and no further.
        #expect(limiter.take("b", now: 1021).remaining == 2)
        #expect(limiter.take("a", now: 100_000).remaining == 2)
        // A clock that steps back refills nothing.
        _ = limiter.take("c", now: 5000)
        _ = limiter.take("c", now: 5000)
        _ = limiter.take("c", now: 5000)
        #expect(limiter.take("c", now: 10).allowed == false)
    }

    @Test func peekTakesNothing() {
        let limiter = RateLimiter(RateLimit(tokens: 1, interval: 3600))
        #expect(limiter.peek("a", now: 0).allowed)
        #expect(limiter.peek("a", now: 0).allowed)
        #expect(limiter.take("a", now: 0).allowed)
        #expect(limiter.peek("a", now: 0) == .init(allowed: false, remaining: 0, retryAfter: 3600))
    }

    /// A reservation a newcomer took from the overflow bucket is given back there, not lost.
    @Test func aTokenTakenFromTheOverflowIsGivenBackThere() {
        let limiter = RateLimiter(RateLimit(tokens: 2, interval: 60), maximumKeys: 1)
        #expect(limiter.take("kept", now: 0).allowed)
        #expect(limiter.take("newcomer", now: 0).remaining == 1)  // the overflow bucket
        limiter.giveBack("newcomer", now: 0)
        #expect(limiter.take("another", now: 0).remaining == 1)
        #expect(limiter.keys == 2)
    }

    /// A flood from many addresses keeps the table at its bound; the newcomers past it share one
    /// overflow bucket, and clients already tracked keep theirs.
    @Test func theTableIsBounded() {
        let limiter = RateLimiter(RateLimit(tokens: 2, interval: 60), maximumKeys: 100)
        #expect(limiter.take("regular", now: 0).allowed)
        for address in 0..<10_000 { _ = limiter.take("flood-\(address)", now: 0) }
        #expect(limiter.keys == 101)  // the bound, and the overflow bucket
        #expect(limiter.take("flood-20000", now: 0).allowed == false)  // the overflow is spent
        #expect(limiter.take("regular", now: 0).allowed)  // its own bucket, one token left
        // A minute on every bucket is full again: they are dropped to make room for new clients.
        #expect(limiter.take("later", now: 61).allowed)
        #expect(limiter.keys <= 2)
    }

    @Test(arguments: [
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"), ("2001:DB8:0001:0002::1", "2001:db8:1:2::/64"), ("::1", "::/64"),
        ("fe80::", "fe80::/64"), ("::ffff:192.0.2.1", "192.0.2.1"), ("192.0.2.1", "192.0.2.1"),
    ])
    func ipv6ClientsCountByTheirSlash64(_ address: String, _ key: String) {
        #expect(IPAddress(address)?.limitKey == key)
    }

    @Test(arguments: ["", "1:2:3", "1::2::3", "12345::", "g::1", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0"])
    func malformedAddressesAreNoAddresses(_ address: String) {
        #expect(IPAddress(address) == nil)
    }

    // MARK: The API's budgets

    struct Server {
        let api: KeyServerAPI
        let clock: ManualClock
        let directory: TemporaryDirectory

        init(
            requests: RateLimit = RateLimit(tokens: 120, interval: 60), failures: RateLimit = RateLimit(tokens: 3, interval: 3600),
            configure: (inout RequestLimits.Settings) -> Void = { _ in }, logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        ) throws {
            directory = try TemporaryDirectory()
            let signing = try ECDSAPrivateKey()
            let verifier = try Verifier(path: directory.path + "/verification.sqlite", signingKey: signing, codeKey: TestDatabase.codeKey())
            var settings = KeyServerAPI.Settings(healthAuthorities: ["ch.example"], deviceAPIKey: "device-key", exportDirectory: directory.path + "/www")
            settings.adminAPIKey = "admin-key"
            var limits = RequestLimits.Settings()
            limits.requests = requests
            limits.failures = failures
            configure(&limits)
            let clock = ManualClock(UnixTime(seconds: Int64(Date().timeIntervalSince1970)))
            self.clock = clock
            api = KeyServerAPI(
                store: try KeyStore(path: directory.path + "/keys.sqlite"), verifier: verifier,
                check: CertificateCheck(
                    verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: verifier.settings.issuer, audience: verifier.settings.audience),
                settings: settings, limits: RequestLimits(limits, logger: logger), clock: { clock.now() })
        }

        func post(_ path: String, _ body: String, key: String? = "device-key", from client: String) async -> KeyServerAPI.Response {
            await api.handle(
                .init(
                    method: "POST", path: path, headers: (key.map { ["X-API-Key": $0] } ?? [:]).merging(["Content-Type": "application/json"]) { $1 },
                    body: Array(body.utf8), client: client))
        }

        func issueCode() async throws -> String {
            let issued = await post("/admin/codes", #"{"testType":"confirmed"}"#, key: "admin-key", from: "10.0.0.1")
            return try #require((try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])?["code"] as? String)
        }
    }

    static func errorCode(_ response: KeyServerAPI.Response) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any])?["errorCode"] as? String
    }

    /// 1,000 wrong codes from one client: the first three are answered as wrong, every later one
    /// 429 with Retry-After, without being looked up; another client's right code still works; an
    /// hour on the first client may try again.
    @Test func wrongCodesSpendAClientsBudgetOfFailures() async throws {
        let server = try Server()
        let code = try await server.issueCode()
        var statuses = [Int: Int]()
        for guess in 0..<1000 {
            let response = await server.post("/api/verify", #"{"code":"\#(String(format: "%08d", guess))"}"#, from: "192.0.2.7")
            statuses[response.status, default: 0] += 1
            if response.status == 429 {
                #expect(Self.errorCode(response) == "rate_limited")
                #expect(Int(response.headers["Retry-After"] ?? "") ?? 0 > 0)
            }
        }
        #expect(statuses == [400: 3, 429: 997])
        // Even the right code is refused to that client until its budget refills...
        #expect(await server.post("/api/verify", #"{"code":"\#(code)"}"#, from: "192.0.2.7").status == 429)
        // ...while another client verifies it.
        #expect(await server.post("/api/verify", #"{"code":"\#(code)"}"#, from: "192.0.2.8").status == 200)
        server.clock.advance(seconds: 1200)  // a third of the hour: one failure more
        #expect(await server.post("/api/verify", #"{"code":"00000000"}"#, from: "192.0.2.7").status == 400)
        #expect(await server.post("/api/verify", #"{"code":"00000001"}"#, from: "192.0.2.7").status == 429)
    }

    /// Wrong API keys are failures too: a wrong administrator key spends the administrator's
    /// budget, which then refuses even the right key from that client (or guessing would go on),
    /// and leaves the public budget alone.
    @Test func wrongAdministratorKeysSpendTheAdministratorsBudget() async throws {
        let server = try Server()
        for _ in 0..<3 {
            #expect(await server.post("/admin/codes", #"{"testType":"confirmed"}"#, key: "guess", from: "198.51.100.1").status == 401)
        }
        #expect(await server.post("/admin/codes", #"{"testType":"confirmed"}"#, key: "admin-key", from: "198.51.100.1").status == 429)
        #expect(await server.post("/api/certificate", #"{}"#, key: nil, from: "198.51.100.1").status == 401)
        // Publishing takes no secret of the client's: it stays open to it.
        #expect(await server.post("/v1/publish", #"{}"#, key: nil, from: "198.51.100.1").status == 400)
    }

    /// Codes and device keys guessed from an address spend its public budget only: the health
    /// authority's administrator there still issues codes, and the guesser gets 429.
    @Test func guessedCodesNeverRefuseTheAdministrator() async throws {
        let server = try Server()
        for guess in 0..<300 {
            _ = await server.post("/api/verify", #"{"code":"\#(String(format: "%08d", guess))"}"#, from: "198.51.100.2")
        }
        for _ in 0..<5 { _ = await server.post("/api/verify", #"{"code":"1"}"#, key: "wrong", from: "198.51.100.2") }
        #expect(await server.post("/api/verify", #"{"code":"12345678"}"#, from: "198.51.100.2").status == 429)
        let issued = await server.post("/admin/codes", #"{"testType":"confirmed"}"#, key: "admin-key", from: "198.51.100.2")
        #expect(issued.status == 200, "\(String(decoding: issued.body, as: UTF8.self))")
        #expect(await server.post("/admin/codes", #"{"testType":"confirmed"}"#, key: "guess", from: "198.51.100.2").status == 401)
    }

    /// Each endpoint has its own budget per client; a client with the device key has its own,
    /// apart from requests without it.
    @Test func requestsHaveABudgetPerEndpointAndClient() async throws {
        let server = try Server(requests: RateLimit(tokens: 5, interval: 60), failures: RateLimit(tokens: 1000, interval: 3600))
        for _ in 0..<5 { #expect(await server.post("/v1/publish", "{}", key: nil, from: "203.0.113.5").status == 400) }
        let limited = await server.post("/v1/publish", "{}", key: nil, from: "203.0.113.5")
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "12")
        #expect(limited.headers["X-RateLimit-Limit"] == "5")
        // Another endpoint, another client: their own budgets.
        #expect(await server.post("/api/verify", #"{"code":"12345678"}"#, from: "203.0.113.5").status == 400)
        #expect(await server.post("/v1/publish", "{}", key: nil, from: "203.0.113.6").status == 400)
        // Static files have no budget.
        for _ in 0..<10 {
            #expect(await server.api.handle(.init(method: "GET", path: "/exports/index.txt", client: "203.0.113.5")).status == 404)
        }
        server.clock.advance(seconds: 12)
        #expect(await server.post("/v1/publish", "{}", key: nil, from: "203.0.113.5").status == 400)
    }
}
