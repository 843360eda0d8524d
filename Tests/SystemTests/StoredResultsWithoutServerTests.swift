// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing
import ENCrypto

/// Issue 40, item 6: the stored results within 14 days are the answer whether or not a key server
/// is configured. Before, a gaend started without `index-url` made no worker, so nothing loaded
/// the results: status said "no exposure" beside a stored one, and ResetAllData left them on disk.
@Suite(.ownThreads) struct StoredResultsWithoutServerTests {
    @Test func storedResultsAreTheAnswerWithoutAKeyServer() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        let tek = Bytes16(words: (0x2122_2324_2526_2728, 0x292A_2B2C_2D2E_2F30))
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(data: data, pemPath: pem, tek: tek, day: day)
        do {
            let served = try ManagerHarness(
                directory: directory,
                ["--radio", "none", "--index-url", planted.server.baseURL + "/index.txt", "--export-key", "310:v1:\(pem)", "--enable", "true"])
            defer { _ = served.stop() }
            let detected = try served.ctl(["detect"])
            #expect(detected.standardOutput.contains("exposure on \(day)"), "\(detected.standardOutput)\(detected.standardError)")
        }

        // The same data directory, no key server: the exposure is still the answer.
        let harness = try ManagerHarness(directory: directory, ["--radio", "none", "--enable", "true"])
        defer { _ = harness.stop() }
        #expect(try harness.status()["exposure_days"] as? [String] == [day.description])
        let status = try harness.ctl(["status"]).standardOutput
        #expect(status.contains("ExposureDays: \(day)"), "\(status)")
        let windows = try harness.json(["exposures", "--windows"]) as? [Any]
        #expect(windows?.count == 1)
        // Detect says why it cannot run, naming the key.
        let detect = try harness.ctl(["detect"])
        #expect(detect.status != 0)
        #expect(detect.standardError.contains("index-url"), "\(detect.standardError)")
        // ResetAllData deletes them.
        #expect(try harness.ctl(["reset", "--yes"]).status == 0)
        #expect(try harness.status()["exposure_days"] as? [String] == [])
        #expect(!FileManager.default.fileExists(atPath: data.path(of: "exposure-results.json")))
    }
}

/// Issue 40, item 17: a server over plain HTTP is allowed but never silent. Anyone on the path can
/// answer for it, and its Date can keep the beacon from advertising.
@Suite(.ownThreads) struct PlainHTTPWarningTests {
    @Test func serversOverPlainHTTPAreNamedAtStart() async throws {
        let directory = try TemporaryDirectory()
        let pem = directory.path + "/export.pem"
        try ECDSAPrivateKey().publicKeyPEM.write(toFile: pem, atomically: true, encoding: .utf8)
        let harness = try ManagerHarness(
            directory: directory,
            [
                "--radio", "none", "--index-url", "http://127.0.0.1:9/index.txt", "--export-key", "310:v1:\(pem)", "--verification-url",
                "https://verification.invalid/api/verify",
            ])
        _ = harness.stop()
        let warning = harness.stderr.split(separator: "\n").first { $0.contains("servers over plain HTTP") }
        #expect(warning?.contains("index-url") == true, "\(harness.stderr)")
        #expect(warning?.contains("verification-url") == false, "\(harness.stderr)")

        let quiet = try ManagerHarness(directory: try TemporaryDirectory(), ["--radio", "none", "--verification-url", "https://verification.invalid/"])
        _ = quiet.stop()
        #expect(!quiet.stderr.contains("plain HTTP"), "\(quiet.stderr)")
    }
}
