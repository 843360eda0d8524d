// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// Issue 53, item 3, on the release binaries: a key server's bytes never reach the owner's terminal
/// raw. An index line of escape sequences (it cleared the screen under `gaenctl status` and hid the
/// exposure days) is quoted escaped into LastDetectionError and everything gaenctl prints, and a key
/// file's region too under `gaenctl tools inspect`.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct OutsideTextTests {
    /// 71 bytes of the kind seen: clear the screen, home, a C1 CSI, a colour, and a made-up answer.
    static let hostile = "https://evil.example/\u{1B}[2J\u{1B}[3J\u{1B}[H\u{9B}32mExposureDays: none in the last 14 days\u{7F}.zip"

    /// No control character but a line feed and a tab.
    static func isClean(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0 != "\n" && $0 != "\t" && OutsideText.isControl($0.value) }
    }

    @Test func aHostileIndexLineIsShownEscapedEverywhere() async throws {
        let directory = try TemporaryDirectory()
        let (_, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x7172_7374_7576_7778)
        defer { withExtendedLifetime(planted) {} }
        try await planted.server.set(["/index.txt": .text(Self.hostile + "\n")])
        let harness = try ManagerHarness(directory: directory, arguments)
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 1)
        #expect(Self.isClean(detected.standardError) && detected.standardError.contains("\\u001b[2J\\u001b[3J\\u001b[H\\u009b32m"), "\(detected.standardError)")
        for command in [["status"], ["get", "LastDetectionError"], ["get", "StatusReason"]] {
            let run = try harness.ctl(command)
            #expect(run.status == 0)
            #expect(Self.isClean(run.standardOutput), "\(command): \(run.standardOutput.debugDescription)")
            #expect(run.standardOutput.contains("\\u001b[2J"), "\(command): \(run.standardOutput)")
        }
        // Escaped where gaend keeps it, so the JSON carries the escaped text too.
        let json = try harness.json(["status"]) as? [String: Any] ?? [:]
        #expect((json["last_detection_error"] as? String)?.contains("\\u001b[2J") == true, "\(json)")
        #expect(harness.stop() == .success)
    }

    @Test func aKeyFilesRegionIsInspectedEscaped() throws {
        let directory = try TemporaryDirectory()
        let signing = try ECDSAPrivateKey()
        let zip = try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(KeyExport(region: "\u{1B}]0;owned\u{7}CH", keys: []))
        let path = directory.path + "/file.zip"
        try Data(zip).write(to: URL(fileURLWithPath: path))
        let pem = directory.path + "/public.pem"
        try signing.publicKeyPEM.write(toFile: pem, atomically: true, encoding: .utf8)
        let run = try ToolRunner.run("gaenctl", ["tools", "inspect", path, "--public-key", pem, "--key-id", "310", "--key-version", "v1"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(Self.isClean(run.standardOutput), "\(run.standardOutput.debugDescription)")
        #expect(run.standardOutput.contains("\\u001b]0;owned\\u0007CH"), "\(run.standardOutput)")
    }
}
