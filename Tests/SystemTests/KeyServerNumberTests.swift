// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Storage
import Testing
import SystemCalls

/// Numbers gaen-keyserver gets from outside: a publish's JSON over HTTP and its own options. None
/// may stop the server; each is refused naming the field or the option.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerNumberTests {
    @Test func aSymptomOnsetNoIntervalHoldsIsABadRequestAndStoresNothing() async throws {
        let server = try KeyServerProcess()
        // A certificate for two keys of yesterday, as a phone gets one.
        let yesterday = try #require(ENIntervalNumber(containing: SystemWallClock().now())).rollingStart.advanced(by: -144)
        let keys = try (1...2).map { byte in
            DiagnosisKey(key: try TemporaryExposureKey(keyData: Bytes16(Array(repeating: UInt8(byte), count: 16))!, rollingStartIntervalNumber: yesterday))
        }
        let secret = [UInt8](repeating: 5, count: 32)
        let certificate = try await server.certificate(for: keys, secret: secret)

        // The publish the certificate is for, with an onset no interval number holds (it once
        // trapped converting days since onset to Int32), then one before 1970.
        let list = keys.map {
            #"{"key":"\#(Data($0.key.keyData.bytes).base64EncodedString())","rollingStartNumber":\#(yesterday.rawValue),"rollingPeriod":144,"transmissionRisk":0}"#
        }
        for onset in ["999999999999999", "-1"] {
            let body =
                #"{"temporaryExposureKeys":[\#(list.joined(separator: ","))],"healthAuthorityID":"ch.example","verificationPayload":"\#(certificate)","hmacKey":"\#(Data(secret).base64EncodedString())","symptomOnsetInterval":\#(onset)}"#
            let response = try await server.transport.send(
                HTTPRequest(
                    method: "POST", url: server.base + "/v1/publish", headers: [("Content-Type", "application/json")], body: Array(body.utf8),
                    maximumResponseBytes: 1 << 16))
            #expect(response.status == 400, "\(onset): \(String(decoding: response.body, as: UTF8.self))")
            let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(object?["code"] as? String == "bad_request")
            #expect((object?["error"] as? String)?.contains("symptomOnsetInterval") == true)
        }
        #expect(server.process.isRunning)
        let exported = try ToolRunner.run(
            "gaen-keyserver",
            ["export", "--data-dir", server.data, "--export-key", server.exportKey, "--region", "XX", "--directory", server.data + "/exports"])
        #expect(exported.standardOutput.contains("nothing to export"), "\(exported.standardOutput)\(exported.standardError)")
    }

    @Test func optionsOutsideTheirRangeAreRefusedNamingThem() throws {
        let files = try TemporaryDirectory()
        for name in ["verification", "export"] {
            _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
        }
        let serve = [
            "serve", "--port", "0", "--data-dir", files.path + "/server", "--verification-key", files.path + "/verification.pem", "--export-key",
            files.path + "/export.pem", "--health-authority", "x", "--device-api-key", "k",
        ]
        // A delay past Int64 milliseconds trapped on the first still-valid key, an interval past
        // what a sleep takes trapped after the first export; negative ones mean nothing. The limit
        // ends a server that started anyway.
        let cases = [
            ("--embargo-delay", "9223372036854775807"), ("--embargo-delay", "-1"), ("--export-interval", "9223372036854775807"),
            ("--export-interval", "-5"), ("--minimum-records", "-9223372036854775808"), ("--minimum-records", "100000000"),
            ("--padding-range", "-1"), ("--padding-range", "100000000"),
        ]
        for (option, value) in cases {
            let run = try ToolRunner.run("gaen-keyserver", serve + ["\(option)=\(value)"], limit: 15)
            #expect(run.status == 2, "\(option)=\(value): \(run.status)")
            #expect(run.standardError.contains(option), "\(option)=\(value): \(run.standardError)")
        }
        let export = try ToolRunner.run(
            "gaen-keyserver",
            [
                "export", "--data-dir", files.path + "/server", "--export-key", files.path + "/export.pem", "--directory", files.path + "/e",
                "--minimum-records=-1",
            ])
        #expect(export.status != 0)
        #expect(export.standardError.contains("--minimum-records"), "\(export.standardError)")
    }
}
