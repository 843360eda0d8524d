// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import Testing
import Detection

/// Issue 40, item 2: a damaged `exposure-results.json` loses the results, not the exposures. The
/// contact log and the key server still hold what made them, so every key file is matched again;
/// until then the hook is told nothing (no `cleared` from an answer that lost its days), and every
/// damaged copy is kept. Before, the files stayed processed (the exposure was never found again),
/// the hook was told `cleared`, and each damage overwrote the one `.damaged` copy.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct LostResultsTests {
    @Test func damagedResultsAreMatchedAgainWithoutTellingCleared() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x4142_4344_4546_4748)
        defer { withExtendedLifetime(planted) {} }
        let runs = directory.path + "/runs"
        let hook = try directory.writeScript("hook", "echo \"$GAEND_EVENT $GAEND_NEW_DAYS\" >> '\(runs)'")
        let first = try ManagerHarness(directory: directory, arguments + ["--exposure-hook", hook])
        #expect(try first.ctl(["detect"]).standardOutput.contains("exposure on \(day)"))
        try await eventually("the hook's run") { first.stderr.contains("exposure hook ran") }
        #expect(first.stop() == .success)

        let data = DataDirectory(path: directory.path + "/data")
        let path = ExposureResults.path(in: data)
        for round in 1...2 {
            try AtomicFile.write(Array("{\"format\": 1, \"results\": [".utf8), to: path)
            let harness = try ManagerHarness(bus: first.bus, directory: directory, arguments + ["--exposure-hook", hook])
            let status = try harness.status()
            #expect(status["exposure_days"] as? [String] == [], "round \(round)")
            let error = status["last_detection_error"] as? String ?? ""
            #expect(error.contains("does not read back") && error.contains("matched again"), "round \(round): \(error)")
            #expect(harness.stderr.contains("stored exposure results lost"), "round \(round)")
            // The next detection matches the server's file again and finds the exposure.
            let detected = try harness.ctl(["detect"])
            #expect(detected.standardOutput.contains("exposure on \(day)"), "round \(round): \(detected.standardOutput)\(detected.standardError)")
            #expect(try harness.status()["exposure_days"] as? [String] == [day.description])
            #expect(try harness.status()["last_detection_error"] as? String ?? "" == "")
            #expect(harness.stop() == .success)
            #expect(!harness.stderr.contains("event=cleared"), "round \(round): \(harness.stderr)")
        }
        // The owner was told once: never `cleared`, never the same day again.
        #expect(ExposureHookDaemonTests.lines(runs) == ["exposed \(day)"])
        // Each damage kept its own copy.
        let copies = try FileManager.default.contentsOfDirectory(atPath: data.path).filter { $0.hasPrefix("exposure-results.json.damaged-") }
        #expect(copies.count == 2, "\(copies)")
    }
}
