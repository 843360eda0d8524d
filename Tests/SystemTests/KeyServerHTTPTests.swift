// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Testing
import ENCore

/// The refusals of `gaen-keyserver serve` as a client meets them: over loopback HTTP, through
/// FlyingFox and the adapter, each a JSON error with the reference code; and nothing stored after.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerHTTPTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var method = "POST"
        var path: String
        var headers: [(String, String)] = [("X-API-Key", "device-key")]
        var body: [UInt8] = []
        var status: Int
        /// The reference code in `code` (publish) or `errorCode` (verification); nil: only `error`.
        var code: String?
        var testDescription: String { name }
    }

    static func publish(keys: Int, authority: String = "ch.example", certificate: String = "x.y.z") -> [UInt8] {
        let today = Int64(Date().timeIntervalSince1970) / 86_400 * 144
        let list = (0..<keys).map { index in
            let key = Data((0..<16).map { UInt8(($0 + index * 7) & 0xFF) }).base64EncodedString()
            return #"{"key":"\#(key)","rollingStartNumber":\#(today - 144 * Int64(1 + index / 3)),"rollingPeriod":144}"#
        }
        return Array(
            #"{"temporaryExposureKeys":[\#(list.joined(separator: ","))],"healthAuthorityID":"\#(authority)","verificationPayload":"\#(certificate)","hmacKey":"AAAA"}"#
                .utf8)
    }

    static let cases: [Case] = [
        Case(name: "publish: not JSON", path: "/v1/publish", body: Array("{nope".utf8), status: 400, code: "bad_request"),
        Case(
            name: "publish: unknown authority", path: "/v1/publish", body: publish(keys: 1, authority: "xx.other"), status: 400,
            code: "unknown_health_authority_id"),
        Case(
            name: "publish: a certificate that is not one", path: "/v1/publish", body: publish(keys: 1), status: 401,
            code: "health_authority_verification_certificate_invalid"),
        Case(name: "publish: over 64 KB", path: "/v1/publish", body: Array(repeating: 0x20, count: 70_000), status: 413),
        Case(
            name: "verify: no device key", path: "/api/verify", headers: [], body: Array(#"{"code":"12345678"}"#.utf8), status: 401,
            code: "unauthorized"),
        Case(name: "verify: not JSON", path: "/api/verify", body: Array("[]".utf8), status: 400, code: "unparsable_request"),
        Case(name: "verify: not a code", path: "/api/verify", body: Array(#"{"code":"abc"}"#.utf8), status: 400, code: "code_invalid"),
        Case(name: "verify: no such code", path: "/api/verify", body: Array(#"{"code":"12345678"}"#.utf8), status: 400, code: "code_invalid"),
        Case(
            name: "certificate: a short HMAC", path: "/api/certificate", body: Array(#"{"token":"a.b.c","ekeyhmac":"AAAA"}"#.utf8), status: 400,
            code: "hmac_invalid"),
        Case(
            name: "certificate: a token that is not one", path: "/api/certificate",
            body: Array(#"{"token":"a.b.c","ekeyhmac":"\#(Data(count: 32).base64EncodedString())"}"#.utf8), status: 400, code: "token_invalid"),
        Case(
            name: "admin: wrong key", path: "/admin/codes", headers: [("X-API-Key", "device-key")], body: Array(#"{"testType":"confirmed"}"#.utf8),
            status: 401, code: "unauthorized"),
        Case(
            name: "admin: unknown test type", path: "/admin/codes", headers: [("X-API-Key", "admin-key")], body: Array(#"{"testType":"maybe"}"#.utf8),
            status: 400, code: "invalid_test_type"),
        Case(name: "exports: outside the directory", method: "GET", path: "/exports/../keys.sqlite", status: 404),
        Case(name: "publish: GET", method: "GET", path: "/v1/publish", status: 405),
    ]

    @Test func everyRefusalIsJSONWithItsCodeAndNothingIsStored() async throws {
        let server = try KeyServerProcess()
        let (data, port, transport) = (server.data, server.port, server.transport)
        for item in Self.cases {
            // 30 s: under AddressSanitizer, beside every other suite, one answer once took over 10.
            let response = try await transport.send(
                HTTPRequest(
                    method: item.method, url: "http://127.0.0.1:\(port)\(item.path)", headers: item.headers + [("Content-Type", "application/json")],
                    body: item.body, timeout: .seconds(30), maximumResponseBytes: 1 << 16))
            #expect(response.status == item.status, "\(item.name): \(String(decoding: response.body, as: UTF8.self))")
            let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(object?["error"] is String, "\(item.name): the body is not a JSON error")
            if let code = item.code {
                #expect((object?["code"] ?? object?["errorCode"]) as? String == code, "\(item.name)")
            }
        }
        // With real certificates (the order of the reference server: the certificate is checked
        // before the keys), what the keys' rules refuse.
        let base = "http://127.0.0.1:\(port)"
        let today = Int64(Date().timeIntervalSince1970) / 86_400 * 144
        func keys(_ count: Int, daysBack: Int64 = 1) throws -> [DiagnosisKey] {
            try (0..<count).map { (index: Int) throws -> DiagnosisKey in
                let bytes: [UInt8] = (0..<16).map { (byte: Int) -> UInt8 in UInt8((byte * 3 + index) & 0xFF) }
                let start = ENIntervalNumber(rawValue: UInt32(today - 144 * (daysBack + Int64(index / 3))))
                let key = try TemporaryExposureKey(keyData: Bytes16(bytes)!, rollingStartIntervalNumber: start)
                return DiagnosisKey(key: key, transmissionRiskLevel: 0, reportType: .confirmedTest)
            }
        }
        func certifiedPublish(_ keys: [DiagnosisKey], secret: [UInt8] = Array(repeating: 5, count: 32), claimed: [UInt8]? = nil) async throws -> String? {
            let certificate = try await server.certificate(for: keys, secret: secret)
            do {
                _ = try await PublishClient(publishURL: base + "/v1/publish", healthAuthorityID: "ch.example", transport: transport)
                    .publish(keys: keys, certificate: certificate, hmacSecret: claimed ?? secret)
                return nil
            } catch {
                return error.serverCode
            }
        }
        #expect(try await certifiedPublish(keys(31)) == "bad_request")
        #expect(try await certifiedPublish(keys(3, daysBack: 20)) == "bad_request")  // every key too old: none acceptable
        #expect(try await certifiedPublish(keys(2), claimed: Array(repeating: 6, count: 32)) == "health_authority_verification_certificate_invalid")

        // Chaff is answered like a publish and stores nothing either.
        let chaff = try await transport.send(
            HTTPRequest(
                method: "POST", url: "http://127.0.0.1:\(port)/v1/publish", headers: [("X-Chaff", "1"), ("Content-Type", "application/json")],
                body: Self.publish(keys: 3),
                maximumResponseBytes: 1 << 16))
        #expect(chaff.status == 200)
        let exported = try ToolRunner.run(
            "gaen-keyserver", ["export", "--data-dir", data, "--export-key", server.exportKey, "--region", "XX", "--directory", data + "/exports"])
        #expect(exported.status == 0)
        #expect(exported.standardOutput.contains("nothing to export"), "\(exported.standardOutput)")
    }
}
