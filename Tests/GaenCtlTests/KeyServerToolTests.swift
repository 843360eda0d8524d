// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeyServer
import Testing

/// gaen-keyserver's administrator commands, and its exports read back by `gaenctl tools inspect`.
@Suite struct KeyServerToolTests {
    @Test func codesAreIssuedAndExportsVerifyWithGaenctl() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/server"
        let made = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", directory.path + "/export.pem"])
        #expect(made.status == 0)
        try made.standardOutput.write(toFile: directory.path + "/export.pub.pem", atomically: true, encoding: .utf8)
        _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", directory.path + "/verification.pem"])
        #expect(try FileManager.default.attributesOfItem(atPath: directory.path + "/export.pem")[.posixPermissions] as? Int == 0o600)

        let code = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--data-dir", data, "--verification-key", directory.path + "/verification.pem", "--type", "confirmed", "--symptom-date", "2026-11-18"])
        #expect(code.status == 0, "\(code.standardError)")
        #expect(code.standardOutput.trimmingCharacters(in: .newlines).count == 8)
        let badType = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--data-dir", data, "--verification-key", directory.path + "/verification.pem", "--type", "maybe"])
        #expect(badType.status != 0)
        #expect(badType.standardError.contains("'maybe' is not confirmed, likely or negative"))

        // Keys published (through the library, as the API will), then exported by the command.
        let now = UnixTime(seconds: Int64(Date().timeIntervalSince1970))
        let today = Int64(try #require(ENIntervalNumber(containing: now)).rollingStart.rawValue)
        let request = try PublishRequest(
            json: Array(#"{"temporaryExposureKeys": [{"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": \#(today - 144)}], "healthAuthorityID": "x"}"#.utf8))
        let store = try KeyStore(path: data + "/keys.sqlite")
        _ = try await store.publish(
            try PublishValidator().validate(request, now: now).accepted, reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: now)
        let exported = try ToolRunner.run(
            "gaen-keyserver",
            ["export", "--data-dir", data, "--export-key", directory.path + "/export.pem", "--key-id", "310:v1", "--region", "CH", "--directory", directory.path + "/www"])
        #expect(exported.status == 0, "\(exported.standardError)")
        let name = exported.standardOutput.replacingOccurrences(of: "wrote ", with: "").trimmingCharacters(in: .newlines)
        let inspected = try ToolRunner.run(
            "gaenctl",
            ["tools", "inspect", directory.path + "/www/" + name, "--public-key", directory.path + "/export.pub.pem", "--key-id", "310", "--key-version", "v1", "--json"])
        #expect(inspected.status == 0, "\(inspected.standardOutput)\(inspected.standardError)")
        #expect(inspected.standardOutput.contains(#""verified""#))
        #expect(inspected.standardOutput.contains("cf60b1f61773d9297167c18482a4d8a4"))  // z2Cx9hdz2SlxZ8GEgqTYpA== in hex
        #expect(try String(contentsOfFile: directory.path + "/www/exposureKeyExport-CH/index.txt", encoding: .utf8) == name)
    }
}
