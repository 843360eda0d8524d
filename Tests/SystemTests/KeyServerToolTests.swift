// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeyServer
import Testing

/// gaen-keyserver's administrator commands, and its exports read back by `gaenctl tools inspect`.
@Suite(.postgreSQLServer) struct KeyServerToolTests {
    @Test func codesAreIssuedAndExportsVerifyWithGaenctl() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/server"
        let made = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", directory.path + "/export.pem"])
        #expect(made.status == 0)
        try made.standardOutput.write(toFile: directory.path + "/export.pub.pem", atomically: true, encoding: .utf8)
        _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", directory.path + "/verification.pem"])
        #expect(try FileManager.default.attributesOfItem(atPath: directory.path + "/export.pem")[.posixPermissions] as? Int == 0o600)

        // The symptom date follows the clock the command reads: a fixed date ages out of the window.
        let threeDaysAgo = UTCDay(containing: UnixTime(seconds: Int64(Date().timeIntervalSince1970))).advanced(by: -3)
        let code = try ToolRunner.run(
            "gaen-keyserver",
            [
                "issue-code", "--data-dir", data, "--verification-key", directory.path + "/verification.pem", "--type", "confirmed", "--symptom-date",
                "\(threeDaysAgo)",
            ])
        #expect(code.status == 0, "\(code.standardError)")
        #expect(code.standardOutput.trimmingCharacters(in: .newlines).count == 8)
        // The codes' HMAC key was made in the data directory, the server's alone, and is kept.
        let keyFile = data + "/code-hmac.key"
        #expect(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int == 0o600)
        let key = try String(contentsOfFile: keyFile, encoding: .utf8)
        #expect(Data(base64Encoded: key.trimmingCharacters(in: .newlines))?.count == 32)
        let json = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--data-dir", data, "--verification-key", directory.path + "/verification.pem", "--type", "likely", "--json"])
        #expect(json.status == 0, "\(json.standardError)")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect((fields["code"] as? String)?.count == 8)
        #expect((fields["longCode"] as? String)?.count == 16)
        let expires = try #require(fields["expiresAtTimestamp"] as? Int)
        #expect(fields["longExpiresAtTimestamp"] as? Int == expires - 15 * 60 + 24 * 3600)
        #expect((fields["expiresAt"] as? String)?.hasSuffix(" UTC") == true)
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == key)
        let badType = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--data-dir", data, "--verification-key", directory.path + "/verification.pem", "--type", "maybe"])
        #expect(badType.status != 0)
        #expect(badType.standardError.contains("'maybe' is not confirmed, likely, negative or user-report"))

        // Keys published (through the library, as the API will), then exported by the command.
        // Published two hours and a minute ago, so past the embargo (issue 53), of a day that
        // ended before then whatever the hour.
        let now = UnixTime(seconds: Int64(Date().timeIntervalSince1970) - 7260)
        let today = Int64(try #require(ENIntervalNumber(containing: now)).rollingStart.rawValue)
        let request = try PublishRequest(
            json: Array(
                #"{"temporaryExposureKeys": [{"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": \#(today - 144), "rollingPeriod": 144}], "healthAuthorityID": "x"}"#
                    .utf8))
        let store = try KeyStore(path: data + "/keys.sqlite")
        _ = try await store.publish(
            try PublishValidator().validate(request, now: now).accepted, reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: now)
        let exported = try ToolRunner.run(
            "gaen-keyserver",
            [
                "export", "--data-dir", data, "--export-key", directory.path + "/export.pem", "--key-id", "310:v1", "--region", "CH", "--directory",
                directory.path + "/www",
            ])
        #expect(exported.status == 0, "\(exported.standardError)")
        let name = exported.standardOutput.replacingOccurrences(of: "wrote ", with: "").trimmingCharacters(in: .newlines)
        let inspected = try ToolRunner.run(
            "gaenctl",
            [
                "tools", "inspect", directory.path + "/www/" + name, "--public-key", directory.path + "/export.pub.pem", "--key-id", "310", "--key-version",
                "v1", "--json",
            ])
        #expect(inspected.status == 0, "\(inspected.standardOutput)\(inspected.standardError)")
        #expect(inspected.standardOutput.contains(#""verified""#))
        #expect(inspected.standardOutput.contains("cf60b1f61773d9297167c18482a4d8a4"))  // z2Cx9hdz2SlxZ8GEgqTYpA== in hex
        #expect(try String(contentsOfFile: directory.path + "/www/exposureKeyExport-CH/index.txt", encoding: .utf8) == name)
    }

    /// `--database` puts the keys and the codes in PostgreSQL; a URL that is not one, or a server
    /// that cannot be reached, is an error naming the option (and never the password).
    @Test(.enabled(if: PostgreSQLServer.binaries != nil, Comment(rawValue: PostgreSQLServer.unavailable)))
    func theDatabaseOptionTakesAPostgreSQLURL() async throws {
        let directory = try TemporaryDirectory()
        let url = try PostgreSQLServer.required().makeDatabase()
        let verification = directory.path + "/verification.pem"
        let export = directory.path + "/export.pem"
        _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", verification])
        _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", export])

        // Replicas must share the codes' key, so it is not made here: it must be given.
        let keyless = try ToolRunner.run("gaen-keyserver", ["issue-code", "--database", url, "--verification-key", verification, "--type", "confirmed"])
        #expect(keyless.status != 0)
        #expect(keyless.standardError.contains("--code-hmac-key-file: with --database every replica must store codes under the same key"))
        let keyFile = directory.path + "/code-hmac.key"
        try (Data((0..<32).map { UInt8($0) }).base64EncodedString() + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let code = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--database", url, "--code-hmac-key-file", keyFile, "--verification-key", verification, "--type", "confirmed"])
        #expect(code.status == 0, "\(code.standardError)")
        #expect(code.standardOutput.trimmingCharacters(in: .newlines).count == 8)

        // Published two hours and a minute ago, so past the embargo (issue 53), of a day that
        // ended before then whatever the hour.
        let now = UnixTime(seconds: Int64(Date().timeIntervalSince1970) - 7260)
        let today = Int64(try #require(ENIntervalNumber(containing: now)).rollingStart.rawValue)
        let request = try PublishRequest(
            json: Array(
                #"{"temporaryExposureKeys": [{"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": \#(today - 144), "rollingPeriod": 144}], "healthAuthorityID": "x"}"#
                    .utf8))
        _ = try await KeyStore(.postgreSQL(connectionString: url)).publish(
            try PublishValidator().validate(request, now: now).accepted, reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: now)
        let exported = try ToolRunner.run(
            "gaen-keyserver", ["export", "--database", url, "--export-key", export, "--region", "CH", "--directory", directory.path + "/www"])
        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(exported.standardOutput.hasPrefix("wrote exposureKeyExport-CH/"))

        let unreachable = try ToolRunner.run(
            "gaen-keyserver",
            [
                "issue-code", "--database", "postgresql://postgres:hunter2@127.0.0.1:1/keys", "--code-hmac-key-file", keyFile, "--verification-key",
                verification,
                "--type", "confirmed",
            ])
        #expect(unreachable.status == 1)
        #expect(unreachable.standardError.contains("--database: cannot use the PostgreSQL database: connection to server at \"127.0.0.1\", port 1 failed"))
        #expect(!unreachable.standardError.contains("hunter2"))
        let served = try ToolRunner.run(
            "gaen-keyserver",
            [
                "serve", "--data-dir", directory.path + "/server", "--database", "postgres://postgres:hunter2@127.0.0.1:1/keys", "--port", "0",
                "--verification-key", verification, "--export-key", export, "--health-authority", "x", "--device-api-key", "k",
            ])
        #expect(served.status == 1)
        #expect(served.standardError.contains("--database: cannot use the PostgreSQL database"))
        let notAURL = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--database", "mysql://x", "--verification-key", verification, "--type", "confirmed"])
        #expect(notAURL.status != 0)
        #expect(notAURL.standardError.contains("--database: expected a postgresql:// or postgres:// URL"))
    }
}
