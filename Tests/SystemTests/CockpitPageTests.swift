// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing

/// The owner's page (cockpit/gaend) in Debian's headless Chromium, served by Debian's cockpit-ws
/// with a local session, over a system-like bus with the shipped policy that the release gaend
/// owns. gaend holds a planted exposure (its contact log and a key file on loopback) and shares
/// through a release gaen-keyserver. Screenshots of each view go to .build/screenshots/cockpit/.
@Suite(
    .ownThreads,
    .enabled(if: CockpitSession.binary != nil, Comment(rawValue: CockpitSession.unavailable)),
    .enabled(if: WebDriver.chromedriver != nil && WebDriver.chromium != nil, Comment(rawValue: WebDriver.unavailable)),
    .timeLimit(.minutes(5)))
struct CockpitPageTests {
    static let screenshots = BumbleFixture.root.appendingPathComponent(".build/screenshots/cockpit").path
    static let phone = (width: 390, height: 2200)
    static let laptop = (width: 1280, height: 1500)

    @Test func theOwnerReadsTheAnswerChecksAndSharesAndAnOutsiderIsRefused() async throws {
        try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
        let directory = try TemporaryDirectory()
        // cockpit-ws as nobody reaches its own folders in here.
        _ = chmod(directory.path, 0o755)
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pub.pem"
        let planted = try await PlantedExposure(
            data: DataDirectory(path: directory.path + "/data"), pemPath: pem, tek: Bytes16(words: (0x2122_2324_2526_2728, 0x292A_2B2C_2D2E_2F30)),
            day: day)

        // Twelve days of other people around the wearer before it, through the shipped tool: the
        // chart has a fortnight to draw (one segment a day, so the planted day is left alone).
        let appended = try ToolRunner.run(
            "gaenctl",
            [
                "tools", "log", "append", "--data-dir", directory.path + "/data", "--aggregates", "3000", "--days", "12", "--last-day",
                day.advanced(by: -1).description, "--per-window", "20", "--distinct-rpis", "500",
            ])
        #expect(appended.status == 0, "\(appended.standardError)")

        // The key server gaend shares through.
        for name in ["verification", "export"] {
            _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(directory.path)/server-\(name).pem"])
        }
        let serverData = directory.path + "/server"
        let (server, serverPort) = try ShareLoopTests.startServer(
            [
                "--data-dir", serverData, "--verification-key", directory.path + "/server-verification.pem", "--export-key",
                directory.path + "/server-export.pem", "--health-authority", "ch.example", "--device-api-key", "device-key", "--export-interval", "0",
            ], output: directory.path + "/server.out", errors: directory.path + "/server.err")
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let base = "http://127.0.0.1:\(serverPort)"

        // The owner's group is root's here: the shipped policy with gaend's user and group mapped.
        let bus = try AuthorizationTests.systemLikeBus(group: "root")
        let harness = try ManagerHarness(
            bus: bus, directory: directory,
            [
                "--radio", "none", "--enable", "true", "--test-mode", "true", "--index-url", planted.server.baseURL + "/index.txt", "--export-key",
                "310:v1:\(pem)", "--verification-url", base, "--verification-api-key", "device-key", "--publish-url", base + "/v1/publish",
                "--health-authority-id", "ch.example",
            ])
        defer { harness.stop() }
        #expect(try harness.ctl(["keys", "--test"]).status == 0)

        // The owner (root) on a laptop: the answer, the chart drawn from GetHeard.
        let owner = try CockpitSession(bus: bus.address, directory: directory.path)
        let browser = try await WebDriver(width: Self.laptop.width, height: Self.laptop.height, profile: directory.path + "/profile-owner")
        try await browser.open(owner.page)
        // No check yet: no answer claimed.
        try await browser.waitForText("#answer") { $0 == "Not checked yet" }
        try await browser.waitForText("#status") { $0.hasPrefix("Paused") }
        // What `gaenctl heard` counts over the 14 days, and a bar for each hour it heard something.
        let heard = try #require(try harness.json(["heard", "--since", "14d"]) as? [String: Any])
        let sightings = try #require(heard["sightings"] as? Int)
        #expect(sightings > 2000, "the tool's sightings and the planted five")
        let formatted = try await browser.run("return Number(arguments[0]).toLocaleString('en-GB')", [sightings]) as? String
        try await browser.waitForText("#heard-summary") { $0.hasPrefix("\(formatted ?? "?") sightings of ") }
        let bars = try await browser.run("return document.querySelectorAll('#heard-chart svg rect.bar').length") as? Int
        let busyHours = (heard["hours"] as? [[String: Any]] ?? []).filter { ($0["sightings"] as? Int ?? 0) > 0 }.count
        #expect(bars == busyHours && busyHours > 100, "bars \(String(describing: bars)), hours with sightings \(busyHours)")
        try await browser.screenshot(to: Self.screenshots + "/laptop-1-no-exposure.png")

        // Issue 46: the key server lists a file that is not an archive. Nothing found in what was
        // checked is not "no exposure": the page says the check was not whole, and why.
        try await planted.server.set(["/index.txt": .text("2.zip\n"), "/2.zip": .text("not a zip archive")])
        try await browser.click("#check-now")
        try await browser.waitForText("#answer") { $0 == "Not fully checked" }
        try await browser.waitForText("#progress-text") { $0.hasPrefix("Done: no exposure found in the files checked; 1 key file was refused") }
        #expect(try await browser.text("#last-outcome")?.hasPrefix("Failed: 1 of 1 key file refused: invalid (") == true)
        #expect(try await browser.text("#answer-detail")?.contains("the last check failed: 1 of 1 key file refused: invalid (") == true)
        try await browser.screenshot(to: Self.screenshots + "/laptop-1b-refused.png")
        try await planted.server.set(["/index.txt": .text("1.zip\n")])
        try await eventually("Check now enabled again") { try await browser.run("return document.getElementById('check-now').disabled") as? Bool == false }

        // Check now: progress, then the exposure arrives through PropertiesChanged.
        try await browser.click("#check-now")
        let answer = try await browser.waitForText("#answer") { $0.hasPrefix("Exposure on ") }
        let expectedDay =
            try await browser.run(
                "return new Date(arguments[0] + 'T00:00:00Z').toLocaleDateString('en-GB', {day: 'numeric', month: 'long', timeZone: 'UTC'})",
                [day.description]) as? String
        #expect(answer == "Exposure on \(expectedDay ?? "?")")
        try await browser.waitForText("#progress-text") { $0.hasPrefix("Done: exposure on ") }
        try await browser.waitForText("#windows-summary") { $0.hasPrefix("1 exposure window:") }
        #expect(try await browser.text("#windows .window p")?.hasPrefix("\(expectedDay ?? "?"): 20 min, ") == true)
        #expect(try await browser.text("#last-outcome") == "Succeeded")
        try await browser.screenshot(to: Self.screenshots + "/laptop-2-exposed.png")

        // A positive test, a code from gaen-keyserver, the review, the share: the server stores keys.
        try await browser.click("#add-test")
        try await browser.waitForText("#share-message") { $0 == "Test result recorded." }
        try await browser.waitForText("#test-results") { $0.contains("confirmed test of") }
        try await browser.click(".share-button")
        try await browser.waitForText("#share-summary") { $0.contains("daily keys from") }
        // A wrong code first: the server's refusal, as gaend names it.
        try await browser.type("#code", "00000000")
        try await browser.click("#share-confirm")
        try await browser.waitForText("#share-error") { $0.hasPrefix("Verification failed: the verification server refused the code") }
        let code = try ToolRunner.run(
            "gaen-keyserver",
            ["issue-code", "--data-dir", serverData, "--verification-key", directory.path + "/server-verification.pem", "--type", "confirmed"]
        ).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        try await browser.run("document.getElementById('code').value = ''; return null")
        try await browser.type("#code", code)
        try await browser.screenshot(to: Self.screenshots + "/laptop-3-share-review.png")
        try await browser.click("#share-confirm")
        try await browser.waitForText("#share-message") { $0 == "Your keys were shared. Thank you." }
        try await browser.waitForText("#test-results") { $0.contains("— shared") }
        let accessLog = (try? String(contentsOfFile: directory.path + "/server.err", encoding: .utf8)) ?? ""
        #expect(accessLog.contains(#""POST /v1/publish" 200"#), "\(accessLog.suffix(600))")

        // The server gone: a second test result's share fails, and gaend's reason is shown.
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        try await browser.run("document.getElementById('test-type').value = 'likely'; return null")
        try await browser.click("#add-test")
        try await browser.waitForText("#test-results") { $0.contains("likely test of") }
        try await browser.click(".share-button")
        try await browser.type("#code", "12345678")
        try await browser.click("#share-confirm")
        let unreachable = try await browser.waitForText("#share-error") { $0.contains("127.0.0.1:\(serverPort)") }
        print("CockpitPageTests: a share with the key server gone reads: \(unreachable)")
        try await browser.click("#share-cancel")

        // The same page at a phone's width.
        try await browser.resize(width: Self.phone.width, height: Self.phone.height)
        try await browser.open(owner.page)
        try await browser.waitForText("#answer") { $0.hasPrefix("Exposure on ") }
        try await browser.waitForText("#windows-summary") { $0.hasPrefix("1 exposure window:") }
        let overflow = try await browser.run("return document.documentElement.scrollWidth - window.innerWidth") as? Int
        #expect(overflow == 0, "the page is wider than a phone")
        try await browser.screenshot(to: Self.screenshots + "/phone-1-exposed.png")

        // A user outside the owner's group: the status, no answer, refusals as messages.
        let outsider = try CockpitSession(bus: bus.address, directory: directory.path, asNobody: true)
        let other = try await WebDriver(width: Self.phone.width, height: Self.phone.height, profile: directory.path + "/profile-outsider")
        try await other.open(outsider.page)
        try await other.waitForText("#answer") { $0 == "The exposure answer is shown to its owner only" }
        try await other.waitForText("#status") { $0.hasPrefix("Paused") }
        try await other.waitForText("#heard-error") { $0.hasPrefix("Not allowed: ") }
        try await other.click("#check-now")
        try await other.waitForText("#detection-error") { $0.hasPrefix("Not allowed: ") }
        try await other.screenshot(to: Self.screenshots + "/phone-2-outsider.png")
        #expect(try harness.status()["exposure_days"] as? [String] == [day.description])
        await other.quit()

        // Consent: off and on again, then everything deleted behind a confirmation.
        try await browser.click("#toggle-enabled")
        try await browser.waitForText("#consent-state") { $0.hasPrefix("Exposure Notification is off") }
        #expect(try harness.status()["enabled"] as? Bool == false)
        try await browser.click("#toggle-enabled")
        try await browser.waitForText("#consent-state") { $0.hasPrefix("Exposure Notification is on") }
        try await browser.click("#reset")
        try await browser.waitForText("#reset-confirm") { $0.contains("It cannot be undone.") }
        try await browser.screenshot(to: Self.screenshots + "/phone-3-reset-confirm.png")
        try await browser.click("#reset-yes")
        try await browser.waitForText("#answer") { $0 == "Not checked yet" }
        try await browser.waitForText("#consent-state") { $0.hasPrefix("Exposure Notification is off (authorization: unknown)") }
        #expect(try harness.status()["exposure_days"] as? [String] == [])
        await browser.quit()
    }
}
