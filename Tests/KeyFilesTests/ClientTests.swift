// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Storage
import Synchronization
import Testing

@Suite(.ownThreads) struct DownloadClientTests {
    let server: HTTPFixture
    let directory: TemporaryDirectory
    /// Records the delays the client asks for and returns at once: retries are tested without waiting.
    let sleeper = RecordingClock()

    init() throws {
        server = try HTTPFixture()
        directory = try TemporaryDirectory()
    }

    /// A request's timeout is the real clock's, so it is long unless a test is about it: under
    /// AddressSanitizer beside every other suite, the 17 MB body took longer than 10 s once, and
    /// the timeout's retry was taken for a retry of the refusal.
    func downloader(attempts: Int = 4, timeout: Duration = .seconds(120)) throws -> KeyFileDownloader {
        let data = DataDirectory(path: directory.path)
        var downloader = KeyFileDownloader(
            indexURL: server.baseURL + "/exposureKeyExport-US/index.txt", baseURL: server.baseURL,
            transport: CurlTransport(), retryClock: sleeper)
        downloader.attempts = attempts
        downloader.timeout = timeout
        return downloader
    }

    /// The index's files not processed yet, as detection's store finds them.
    func pending(_ client: KeyFileDownloader) async throws -> [String] {
        try ProcessedFilesStore(dataDirectory: DataDirectory(path: directory.path)).pending(try await client.index())
    }

    @Test func withoutABaseTheIndexLayoutDecides() async throws {
        // The reference layout: lines name the index's folder, so the base is the folder above.
        #expect(
            KeyFileDownloader.defaultBase(indexURL: "https://cdn.example/exports/exposureKeyExport-US/index.txt", firstLine: Self.names[0])
                == "https://cdn.example/exports")
        // Flat: lines are file names beside the index.
        #expect(
            KeyFileDownloader.defaultBase(indexURL: "https://cdn.example/keys/index.txt", firstLine: "1-2-00001.zip") == "https://cdn.example/keys")
        #expect(KeyFileDownloader.defaultBase(indexURL: "https://cdn.example/index.txt", firstLine: "cdn.example/a.zip") == "https://cdn.example")
        try await server.set(["/exposureKeyExport-US/index.txt": .text(Self.names[0] + "\n")])
        var client = try downloader()
        client.baseURL = nil
        #expect(try await pending(client) == [server.baseURL + "/" + Self.names[0]])
    }

    static let names = (1...4).map { "exposureKeyExport-US/16000\($0)0000-16000\($0)3600-00001.zip" }

    @Test func newFilesComeInIndexOrderAndTheSetSurvivesReorderingAndShrinking() async throws {
        try await server.set([
            "/exposureKeyExport-US/index.txt": .text(Self.names[0..<3].joined(separator: "\n")),  // no final newline
            "/" + Self.names[0]: HTTPFixture.Route(body: [1]), "/" + Self.names[1]: HTTPFixture.Route(body: [2]),
            "/" + Self.names[2]: HTTPFixture.Route(body: [3]), "/" + Self.names[3]: HTTPFixture.Route(body: [4]),
        ])
        let client = try downloader()
        let first = try await pending(client)
        #expect(first == Self.names[0..<3].map { server.baseURL + "/" + $0 })
        #expect(try await client.download(first[1]) == [2])
        // Only the caller marks a file processed, after handling it.
        try ProcessedFilesStore(dataDirectory: DataDirectory(path: directory.path)).markProcessed([first[0], first[1]], at: .vectorDay)
        #expect(try await pending(client) == [first[2]])

        // The server drops the oldest, reorders, and adds one: the set decides, not positions.
        try await server.set(["/exposureKeyExport-US/index.txt": .text([Self.names[3], Self.names[2], Self.names[1]].joined(separator: "\n") + "\n")])
        let again = try downloader()
        #expect(try await pending(again) == [server.baseURL + "/" + Self.names[3], first[2]])
        #expect(try AtomicFile.mode(of: directory.path + "/processed-key-files") == 0o600)
    }

    @Test func transientFailuresAreRetriedWithBackoffAndPermanentOnesAreNot() async throws {
        try await server.set([
            "/flaky.zip": HTTPFixture.Route(body: [9], failTimes: 2),
            "/missing.zip": .text("gone", status: 404),
        ])
        let client = try downloader()
        #expect(try await client.download(server.baseURL + "/flaky.zip") == [9])
        #expect(sleeper.recorded == [.seconds(2), .seconds(4)])
        await #expect(throws: ClientError.server(url: server.baseURL + "/missing.zip", status: 404, code: nil, message: nil)) {
            try await client.download(server.baseURL + "/missing.zip")
        }
        let requests = try await server.requests()
        #expect(requests.count { $0.path == "/flaky.zip" } == 3)
        #expect(requests.count { $0.path == "/missing.zip" } == 1)
    }

    @Test func aTruncatedBodyIsAnErrorAfterTheRetries() async throws {
        try await server.set(["/cut.zip": HTTPFixture.Route(body: [UInt8](repeating: 7, count: 4000), truncate: true)])
        let client = try downloader(attempts: 3)
        let error = await #expect(throws: ClientError.self) { try await client.download(server.baseURL + "/cut.zip") }
        guard case .http(let cause)? = error else { Issue.record("expected an HTTP error, got \(String(describing: error))"); return }
        #expect(cause.isTransient)
        #expect(try await server.requests().count { $0.path == "/cut.zip" } == 3)
    }

    @Test func anOversizedBodyIsRefusedAndNotRetried() async throws {
        // 17 MB, over the 16 MB archive limit.
        try await server.set(["/huge.zip": HTTPFixture.Route(body: [UInt8](repeating: 1, count: 1 << 20), repeatBody: 17)])
        let client = try downloader()
        await #expect(throws: ClientError.http(.responseTooLarge(url: server.baseURL + "/huge.zip", limit: KeyFileLimits.maximumArchiveBytes))) {
            try await client.download(server.baseURL + "/huge.zip")
        }
        #expect(sleeper.recorded.isEmpty)
    }

    @Test func aSlowServerTimesOut() async throws {
        try await server.set(["/slow.zip": HTTPFixture.Route(body: [1], delaySeconds: 5)])
        let client = try downloader(attempts: 1, timeout: .milliseconds(500))
        await #expect(throws: ClientError.http(.timedOut(url: server.baseURL + "/slow.zip", after: .milliseconds(500)))) {
            try await client.download(server.baseURL + "/slow.zip")
        }
    }

    static let badIndexes: [(String, String)] = [
        ("<html><body>Maintenance</body></html>", "line 1 is not a relative path"),
        ("exposureKeyExport-US/a.zip\n../../etc/passwd", "line 2 is not a relative path"),
        ("https://elsewhere.example/a.zip", "line 1 is not a relative path"),
        ("/absolute/a.zip", "line 1 is not a relative path"),
    ]

    @Test(arguments: badIndexes)
    func wrongIndexContentIsRefusedByLine(index: String, reason: String) async throws {
        try await server.set(["/exposureKeyExport-US/index.txt": .text(index)])
        let error = await #expect(throws: ClientError.self) { try await downloader().index() }
        #expect("\(String(describing: error))".contains(reason))
    }

    @Test func binaryIndexIsRefused() async throws {
        try await server.set(["/exposureKeyExport-US/index.txt": HTTPFixture.Route(body: [0xFF, 0xFE, 0x00, 0x41])])
        let error = await #expect(throws: ClientError.self) { try await downloader().index() }
        #expect("\(String(describing: error))".contains("not UTF-8"))
    }

    @Test func aBadURLIsNamed() async throws {
        var client = try downloader()
        client.indexURL = "ftp://example/index.txt"
        await #expect(throws: ClientError.http(.badURL("ftp://example/index.txt"))) { try await pending(client) }
    }
}

@Suite(.ownThreads) struct VerificationAndPublishTests {
    let server: HTTPFixture

    init() throws {
        server = try HTTPFixture()
    }

    static func key(_ base64: String, start: UInt32, period: UInt32, risk: Int32) -> DiagnosisKey {
        let bytes = [UInt8](Data(base64Encoded: base64)!)
        return DiagnosisKey(
            key: try! TemporaryExposureKey(keyData: Bytes16(bytes)!, rollingStartIntervalNumber: ENIntervalNumber(rawValue: start), rollingPeriod: period),
            transmissionRiskLevel: risk)
    }

    @Test func theKeysHMACReproducesTheReferenceValues() {
        let secret = [UInt8](1...16)
        let keys = [
            Self.key("z2Cx9hdz2SlxZ8GEgqTYpA==", start: 1, period: 144, risk: 3), Self.key("dPCphLzfG4uzXneNimkPRQ==", start: 144, period: 144, risk: 5),
        ]
        #expect(TEKHMAC.cleartext(keys) == "dPCphLzfG4uzXneNimkPRQ==.144.144.5,z2Cx9hdz2SlxZ8GEgqTYpA==.1.144.3")
        #expect(Data(TEKHMAC.compute(keys, secret: secret)).base64EncodedString() == "2u1nHt5WWurJytFLF3xitNzM99oNrad2y4YGOL53AeY=")
        let zero = keys.map {
            var key = $0; key.transmissionRiskLevel = 0; return key
        }
        #expect(Data(TEKHMAC.compute(zero, secret: secret)).base64EncodedString() == "mFNI9zhTA17n4ndd1Vu5tsn4XQX0gPrIKyjeh/9noUE=")
        #expect(
            Data(TEKHMAC.compute(zero, secret: secret, includeTransmissionRisk: false)).base64EncodedString() == "J9S7xVebH/66dm14wGsIcAnSUR3PHD4NtDQEOGZbDUo=")
    }

    func client() -> VerificationClient {
        VerificationClient(
            verifyURL: server.baseURL + "/api/verify", certificateURL: server.baseURL + "/api/certificate", apiKey: "device-key",
            transport: CurlTransport())
    }

    @Test func aCodeBecomesATokenAndTheTokenACertificate() async throws {
        try await server.set([
            "/api/verify": .json(#"{"testtype":"confirmed","symptomDate":"2026-11-15","token":"TOKEN","padding":"x"}"#),
            "/api/certificate": .json(#"{"certificate":"CERT.JWT","padding":"y"}"#),
        ])
        let verified = try await client().verify(code: "12345678")
        #expect(verified == .init(testType: "confirmed", symptomDate: "2026-11-15", testDate: nil, token: "TOKEN"))
        let hmac = [UInt8](repeating: 0xAB, count: 32)
        #expect(try await client().certificate(token: "TOKEN", keysHMAC: hmac) == "CERT.JWT")

        let requests = try await server.requests()
        #expect(requests.map(\.path) == ["/api/verify", "/api/certificate"])
        #expect(requests[0].headers["x-api-key"] == "device-key")
        #expect(requests[0].headers["content-type"] == "application/json")
        let verify = try #require(try JSONSerialization.jsonObject(with: requests[0].body) as? [String: Any])
        #expect(verify["code"] as? String == "12345678")
        #expect(verify["accept"] as? [String] == ["confirmed", "likely", "negative"])
        #expect((verify["padding"] as? String)?.count ?? 0 >= 1024)
        let certificate = try #require(try JSONSerialization.jsonObject(with: requests[1].body) as? [String: Any])
        #expect(certificate["token"] as? String == "TOKEN")
        #expect(certificate["ekeyhmac"] as? String == Data(hmac).base64EncodedString())
    }

    @Test func serverErrorsAreSurfacedByName() async throws {
        try await server.set([
            "/api/verify": .json(#"{"error":"verification code is invalid","errorCode":"code_invalid"}"#, status: 400),
            "/api/certificate": .json("not json", status: 200),
        ])
        let error = await #expect(throws: ClientError.self) { try await client().verify(code: "bad") }
        #expect(error?.serverCode == "code_invalid")
        #expect("\(String(describing: error))".contains("HTTP 400 (code_invalid: verification code is invalid)"))
        await #expect(throws: ClientError.unexpectedResponse(url: server.baseURL + "/api/certificate", reason: "the body is not a JSON object")) {
            try await client().certificate(token: "T", keysHMAC: [UInt8](repeating: 0, count: 32))
        }
        await #expect(throws: ClientError.local("the keys' HMAC is 3 bytes, not 32")) {
            try await client().certificate(token: "T", keysHMAC: [1, 2, 3])
        }
    }

    @Test func publishSendsTheReferenceFieldsAndKeepsTheRevisionToken() async throws {
        try await server.set(["/v1/publish": .json(#"{"revisionToken":"REV-1","insertedExposures":2}"#)])
        let publisher = PublishClient(publishURL: server.baseURL + "/v1/publish", healthAuthorityID: "org.example.ha", transport: CurlTransport())
        let keys = [
            Self.key("z2Cx9hdz2SlxZ8GEgqTYpA==", start: 2_700_000, period: 144, risk: 0),
            Self.key("dPCphLzfG4uzXneNimkPRQ==", start: 2_700_144, period: 70, risk: 0),
        ]
        let secret = [UInt8](repeating: 5, count: 16)
        let result = try await publisher.publish(
            keys: keys, certificate: "CERT", hmacSecret: secret, symptomOnsetInterval: ENIntervalNumber(rawValue: 2_699_856), revisionToken: "REV-0")
        #expect(result.revisionToken == "REV-1")
        #expect(result.insertedExposures == 2)

        let request = try #require(try await server.requests().first)
        let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        #expect(
            Set(body.keys) == [
                "temporaryExposureKeys", "healthAuthorityID", "verificationPayload", "hmacKey", "symptomOnsetInterval", "revisionToken", "padding",
            ])
        #expect(body["healthAuthorityID"] as? String == "org.example.ha")
        #expect(body["verificationPayload"] as? String == "CERT")
        #expect(body["hmacKey"] as? String == Data(secret).base64EncodedString())
        #expect(body["symptomOnsetInterval"] as? Int == 2_699_856)
        #expect(body["revisionToken"] as? String == "REV-0")
        let sent = try #require(body["temporaryExposureKeys"] as? [[String: Any]])
        #expect(sent.count == 2)
        #expect(sent[1]["key"] as? String == "dPCphLzfG4uzXneNimkPRQ==")
        #expect(sent[1]["rollingStartNumber"] as? Int == 2_700_144)
        #expect(sent[1]["rollingPeriod"] as? Int == 70)
        #expect(sent[1]["transmissionRisk"] as? Int == 0)
    }

    @Test func publishErrorsAndChaff() async throws {
        try await server.set(["/v1/publish": .json(#"{"error":"revision token is invalid","code":"invalid_revision_token"}"#, status: 400)])
        let publisher = PublishClient(publishURL: server.baseURL + "/v1/publish", healthAuthorityID: "ha", transport: CurlTransport())
        let error = await #expect(throws: ClientError.self) {
            try await publisher.publish(keys: [], certificate: "C", hmacSecret: [1], revisionToken: "old")
        }
        #expect(error?.serverCode == "invalid_revision_token")
        await publisher.chaff()
        let requests = try await server.requests()
        #expect(requests.count == 2)
        #expect(requests[1].headers["x-chaff"] == "1")
    }
}
