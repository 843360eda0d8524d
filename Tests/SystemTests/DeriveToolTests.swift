// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Testing

/// `gaenctl tools derive`, `payload` and `parse-adv`, run as processes.
@Suite(.ownThreads) struct OfflineToolTests {
    static let tek = "75c734c6dd1a782de7a965da5eb93125"

    @Test func deriveJSONReproducesTheOfficialVectors() throws {
        let run = try ToolRunner.run(
            "gaenctl", ["tools", "derive", "--tek", Self.tek, "--interval", "2642976", "--count", "144", "--metadata", "40080000", "--json"])
        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(object["rpik"] as? String == "185ad91db69ec7dd048960f1f3ba6175")
        #expect(object["aemk"] as? String == "d57c46af7a1d83965b9bed8bd152936a")
        let intervals = try #require(object["intervals"] as? [[String: Any]])
        #expect(intervals.count == 144)
        #expect(intervals.first?["enin"] as? Int == 2_642_976)
        #expect(intervals.first?["rpi"] as? String == "8be6cd371c5c891604bfbe49df845096")
        #expect(intervals.first?["aem"] as? String == "72033874")
        #expect(intervals.last?["enin"] as? Int == 2_642_976 + 143)
        #expect(intervals.last?["rpi"] as? String == "f431b62ecf443102ce4ed0407de54bd4")
        #expect(intervals.last?["aem"] as? String == "1215e57e")
        #expect(intervals.allSatisfy { $0["metadata"] as? String == "40080000" })
    }

    @Test func deriveTextNamesEachValue() throws {
        let run = try ToolRunner.run("gaenctl", ["tools", "derive", "--tek", Self.tek, "--interval", "2642976"])
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("RPIK      185ad91db69ec7dd048960f1f3ba6175"))
        #expect(run.standardOutput.contains("2642976   2020-04-02T00:00:00Z  8be6cd371c5c891604bfbe49df845096"))
    }

    @Test func payloadBuildsTheFrame() throws {
        let run = try ToolRunner.run(
            "gaenctl", ["tools", "payload", "--rpi", "8be6cd371c5c891604bfbe49df845096", "--aem", "72033874"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "02011a03036ffd17166ffd8be6cd371c5c891604bfbe49df84509672033874\n")
        let android = try ToolRunner.run(
            "gaenctl", ["tools", "payload", "--rpi", "8be6cd371c5c891604bfbe49df845096", "--aem", "72033874", "--no-flags"])
        #expect(android.standardOutput == "03036ffd17166ffd8be6cd371c5c891604bfbe49df84509672033874\n")
    }

    @Test func parseAdvDecodesAnAndroidFrame() throws {
        let run = try ToolRunner.run(
            "gaenctl", ["tools", "parse-adv", "03036ffd17166ffd8be6cd371c5c891604bfbe49df84509672033874", "--json"])
        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let gaen = try #require(object["gaen"] as? [String: Any])
        #expect(gaen["rpi"] as? String == "8be6cd371c5c891604bfbe49df845096")
        #expect(gaen["aem"] as? String == "72033874")
        #expect((object["structures"] as? [Any])?.count == 2)

        let other = try ToolRunner.run("gaenctl", ["tools", "parse-adv", "020106"])
        #expect(other.status == 0)
        #expect(other.standardOutput.contains("no Exposure Notification service data"))
    }

    static let badInputs: [([String], String)] = [
        (["tools", "derive", "--tek", "75c", "--interval", "1"], "--tek: '75c': odd number of hex digits"),
        (["tools", "derive", "--tek", "75c7", "--interval", "1"], "--tek: '75c7': 2 bytes, expected 16"),
        (["tools", "derive", "--tek", "zz" + String(tek.dropFirst(2)), "--interval", "1"], "--tek:"),
        (["tools", "derive", "--tek", tek, "--interval", "-5"], "--interval: '-5' is negative"),
        (["tools", "derive", "--tek", tek, "--interval=-5"], "--interval: '-5' is negative"),
        (["tools", "derive", "--tek", tek, "--interval", "ten"], "--interval: 'ten' is not a decimal interval number"),
        (["tools", "derive", "--tek", tek, "--interval", "4294967296"], "--interval: '4294967296' is larger"),
        (["tools", "derive", "--tek", tek, "--interval", "1", "--count", "0"], "--count: 0 is outside 1...144"),
        (["tools", "derive", "--tek", tek, "--interval", "4294967295", "--count", "2"], "--count: 2 intervals from"),
        (["tools", "derive", "--tek", tek, "--interval", "1", "--metadata", "4008"], "--metadata: '4008': 2 bytes, expected 4"),
        (["tools", "derive", "--tek", tek], "--interval"),
        (["tools", "payload", "--rpi", "8be6", "--aem", "72033874"], "--rpi: '8be6': 2 bytes, expected 16"),
        (["tools", "payload", "--rpi", "8be6cd371c5c891604bfbe49df845096", "--aem", "720338"], "--aem: '720338': 3 bytes"),
        (["tools", "parse-adv", "03036ffd18166ffd8be6"], "<data>: AD structure at offset 4 declares 24 bytes but only 5 remain"),
        (["tools", "parse-adv", "0"], "<data>: '0': odd number of hex digits"),
        (["tools", "parse-adv", "16166ffd" + String(repeating: "00", count: 19)], "<data>: 0xFD6F service data at offset 0 carries 19 bytes"),
        (["tools", "no-such-tool"], "no-such-tool"),
    ]

    @Test(arguments: badInputs)
    func badInputExitsTwoNamingTheArgument(arguments: [String], message: String) throws {
        let run = try ToolRunner.run("gaenctl", arguments)
        #expect(run.status == 2)
        #expect(run.standardError.contains(message), "stderr: \(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test func helpAndVersionExitZero() throws {
        let help = try ToolRunner.run("gaenctl", ["tools", "derive", "--help"])
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("--tek"))
        let version = try ToolRunner.run("gaenctl", ["--version"])
        #expect(version.status == 0)
        #expect(version.standardOutput.hasPrefix("0."))
        let daemon = try ToolRunner.run("gaend", ["--help"])
        #expect(daemon.status == 0)
        #expect(daemon.standardOutput.contains("gaend"))
        let daemonVersion = try ToolRunner.run("gaend", ["--version"])
        #expect(daemonVersion.status == 0)
        #expect(daemonVersion.standardOutput.hasPrefix("0."))
    }

    /// `--version` of each program names the version the docs name and the commit built: the same
    /// line from all three, `VERSION (git REVISION)`, the revision that of this checkout.
    @Test func versionNamesTheDocumentedVersionAndTheCommit() throws {
        let lines = try ["gaend", "gaenctl", "gaen-keyserver"].map { try ToolRunner.run($0, ["--version"]).standardOutput }
        #expect(Set(lines).count == 1, "\(lines)")
        let line = try #require(lines.first)
        let match = try #require(line.wholeMatch(of: /(\d+\.\d+\.\d+) \(git ([0-9a-f]{12}(-dirty)?|unknown)\)\n/))
        let version = String(match.1)
        #expect(version == GaendVersion.string)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let head = try ToolRunner.runProgram("/usr/bin/git", ["-C", root.path, "rev-parse", "--short=12", "HEAD"])
        if head.status == 0 { #expect(match.2.hasPrefix(head.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))) }
        // The man pages and the D-Bus API's page name the same version.
        for page in ["man/gaend.8", "man/gaenctl.1", "man/gaen-keyserver.8", "man/gaend.conf.5", "org.gaend.Manager1.rst"] {
            let text = try String(contentsOf: root.appendingPathComponent("docs/\(page)"), encoding: .utf8)
            #expect(text.contains("gaend \(version)"), "docs/\(page) names another version")
        }
    }
}
