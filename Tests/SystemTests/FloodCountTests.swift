// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import SystemCalls
import Testing

/// Every report a controller sends while gaend's scan window is open is in that window or
/// counted (issue 37): the release gaend on testbed/report_flood.py, paced, scanning a second in
/// two; at the end the reports the flood wrote equal those the windows logged plus those gaend
/// counted as outside a window or dropped on the way (its "radio stopped" line).
@Suite(.ownThreads) struct FloodCountTests {
    @Test func reportsSentAreLoggedOrCounted() async throws {
        guard ProcessInfo.processInfo.environment["GAEND_PRODUCTS_DIR"] != nil else {
            print("skipped: the flood count is for the release binaries (GAEND_PRODUCTS_DIR)")
            return
        }
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let socket = directory.path + "/flood.sock"
        // 4 chunks a second of 2,000 reports of 500 RPIs: well under a window's cap of 5,000 RPIs.
        let flood = try await ReportFlood(rpis: 500, seconds: 120, chunksPerSecond: 4, socket: socket)
        defer { flood.stop() }
        let harness = try ManagerHarness(
            directory: directory, ["--radio", "h4+unix:\(socket)", "--scan-window", "1", "--scan-interval", "2-2", "--enable", "true"])
        defer { _ = harness.stop() }
        func windows() throws -> [[String: Any]] {
            let today = UTCDay(containing: SystemWallClock().now())
            let run = try ToolRunner.run("gaenctl", ["tools", "log", "export", "--data-dir", data, "--from", "\(today.advanced(by: -1))", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
            return object?["scan_windows"] as? [[String: Any]] ?? []
        }
        try await eventually("three windows that heard the flood", within: .seconds(60)) {
            try windows().filter { ($0["gaen_reports"] as? Int ?? 0) > 0 }.count >= 3
        }
        // gaend first (its last window written at the disable), then the flood, which has sent
        // nothing since that disable's answer.
        let exit = harness.stop()
        #expect(exit?.exited == true && exit?.status == 0, "\(harness.stderr)")
        flood.stop()
        let sent = try #require(flood.sent)
        let logged = try windows().reduce(0) { $0 + ($1["gaen_reports"] as? Int ?? 0) }
        let (outside, dropped) = try #require(Self.countsAtStop(in: harness.stderr), "\(harness.stderr)")
        print("flood count: \(sent) sent, \(logged) logged in \(try windows().count) windows, \(outside) outside a window, \(dropped) dropped on the way")
        #expect(sent > 0)
        #expect(sent == logged + outside + dropped, "\(sent) sent, \(logged) logged, \(outside) outside, \(dropped) dropped")
    }

    /// What gaend's last "radio stopped" line counted: reports outside a window, and dropped on
    /// the way; nil without such a line.
    static func countsAtStop(in stderr: String) -> (outside: Int, dropped: Int)? {
        guard let stopped = stderr.split(separator: "\n").last(where: { $0.contains("radio stopped") }) else { return nil }
        func count(_ key: String) -> Int? {
            stopped.split(separator: " ").first { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
        }
        guard let outside = count("reports.outsideWindows"), let dropped = count("reports.droppedOnTheWay") else { return nil }
        return (outside, dropped)
    }
}
