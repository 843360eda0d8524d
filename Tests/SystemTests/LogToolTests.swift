// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Storage
import Testing
import SystemCalls

/// `gaenctl tools log` on logs written by the real writer (through `tools log append`).
@Suite(.ownThreads) struct LogToolTests {
    let directory: TemporaryDirectory
    let data: String
    let today = UTCDay(containing: SystemWallClock().now())

    init() throws {
        directory = try TemporaryDirectory()
        data = directory.path + "/gaend"
    }

    func append(_ aggregates: Int, days: Int = 2, seed: Int = 3) throws {
        let run = try ToolRunner.run(
            "gaenctl",
            [
                "tools", "log", "append", "--data-dir", data, "--aggregates", "\(aggregates)", "--days", "\(days)",
                "--per-window", "100", "--seed", "\(seed)", "--last-day", "\(today)",
            ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.split(separator: "\n").last == "synced \(aggregates)")
    }

    func json(_ arguments: [String]) throws -> (Int32, [String: Any]) {
        let run = try ToolRunner.run("gaenctl", arguments + ["--json"])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        return (run.status, try #require(object, "\(run.standardOutput) \(run.standardError)"))
    }

    @Test func appendPrintsEverySyncAndStatsCountWithoutIdentifiers() throws {
        let run = try ToolRunner.run(
            "gaenctl",
            ["tools", "log", "append", "--data-dir", data, "--aggregates", "450", "--per-window", "100", "--last-day", "\(today)"])
        #expect(run.standardOutput == "synced 100\nsynced 200\nsynced 300\nsynced 400\nsynced 450\n")

        let (status, stats) = try json(["tools", "log", "stats", "--data-dir", data])
        #expect(status == 0)
        let days = try #require(stats["days"] as? [[String: Any]])
        #expect(days.count == 1)
        #expect(days[0]["day"] as? String == today.description)
        #expect(days[0]["aggregates"] as? Int == 450)
        #expect(days[0]["scan_windows"] as? Int == 5)
        #expect(days[0]["distinct_rpis"] as? Int == 450)
        #expect((days[0]["hours"] as? [Any])?.isEmpty == false)
        #expect(stats["segments_intact"] as? Bool == true)

        // No RPI of the log appears in either form of the statistics.
        let text = try ToolRunner.run("gaenctl", ["tools", "log", "stats", "--data-dir", data]).standardOutput
        let export = try ToolRunner.run("gaenctl", ["tools", "log", "export", "--data-dir", data]).standardOutput
        let someRPI = String(try #require(export.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first))
        #expect(someRPI.count == 32)
        #expect(!text.contains(someRPI))
        #expect(!(try ToolRunner.run("gaenctl", ["tools", "log", "stats", "--data-dir", data, "--json"]).standardOutput.contains(someRPI)))
    }

    /// Reading tools default to the daemon's data directory, as the docs say; append, which
    /// writes synthetic sightings, never does.
    @Test func readersDefaultToTheDaemonsDataDirectoryAndAppendNever() throws {
        let stats = try ToolRunner.run("gaenctl", ["log", "stats"])
        #expect(stats.status == 0 || stats.standardError.contains("/var/lib/gaend"), "\(stats.standardError)")
        #expect(stats.status != 2)
        let append = try ToolRunner.run("gaenctl", ["tools", "log", "append", "--aggregates", "1"])
        #expect(append.status == 2)
        #expect(append.standardError.contains("--data-dir: append writes synthetic sightings"))
    }

    @Test func exportHonoursTheDayRange() throws {
        try append(600, days: 3)
        let (status, all) = try json(["tools", "log", "export", "--data-dir", data])
        #expect(status == 0)
        let aggregates = try #require(all["aggregates"] as? [[String: Any]])
        #expect(aggregates.count == 600)
        #expect(aggregates[0]["rpi"] as? String != nil)
        #expect((all["scan_windows"] as? [Any])?.count == 6)

        let (_, last) = try json(["tools", "log", "export", "--data-dir", data, "--from", "\(today)", "--to", "\(today)"])
        let lastDay = try #require(last["aggregates"] as? [[String: Any]])
        #expect(!lastDay.isEmpty && lastDay.count < 600)
        #expect(lastDay.allSatisfy { ($0["first_seen"] as? String)?.hasPrefix(today.description) == true })
    }

    @Test func verifyExitsOneOnDamageWithPositions() throws {
        try append(300, days: 1)
        let (clean, report) = try json(["tools", "log", "verify", "--data-dir", data])
        #expect(clean == 0)
        #expect(report["intact"] as? Bool == true)

        let path = data + "/contacts/\(today).log"
        var bytes = try #require(try AtomicFile.read(path, limit: 1 << 24))
        bytes[48 + 48 * 10 + 7] ^= 0xFF
        try AtomicFile.write(bytes + [1, 2, 3], to: path)
        let (damaged, damage) = try json(["tools", "log", "verify", "--data-dir", data])
        #expect(damaged == 1)
        #expect(damage["intact"] as? Bool == false)
        let segment = try #require((damage["segments"] as? [[String: Any]])?.first)
        #expect(segment["corrupt_records"] as? [Int] == [48 + 48 * 10])
        #expect(segment["torn_tail_bytes"] as? Int == 3)
        #expect(segment["torn_tail_offset"] as? Int == bytes.count)
        let text = try ToolRunner.run("gaenctl", ["tools", "log", "verify", "--data-dir", data])
        #expect(text.status == 1)
        #expect(text.standardOutput.contains("corrupt record at byte \(48 + 48 * 10)"))
        #expect(text.standardOutput.contains("torn tail: 3 bytes"))
        // verify changed nothing.
        #expect(try AtomicFile.size(of: path) == Int64(bytes.count + 3))
    }

    static let badInputs: [([String], Int32, String)] = [
        (["tools", "log", "stats", "--data-dir", "/nonexistent/gaend"], 1, "--data-dir: /nonexistent/gaend does not exist"),
        (["tools", "log", "export", "--data-dir", "/tmp", "--from", "2020-02-30"], 2, "--from: '2020-02-30' is not a date"),
        (["tools", "log", "export", "--data-dir", "/tmp", "--from", "2020-03-02", "--to", "2020-03-01"], 2, "--to: 2020-03-01 is before --from 2020-03-02"),
        (["tools", "log", "append", "--data-dir", "/tmp/x", "--aggregates", "0"], 2, "--aggregates: 0 must be positive"),
        (["tools", "log", "append", "--data-dir", "/tmp/x", "--aggregates", "5", "--days", "15"], 2, "--days: 15 is outside 1...14"),
        (["tools", "log", "append", "--data-dir", "/tmp/x", "--aggregates", "5", "--distinct-rpis", "10"], 2, "--distinct-rpis: 10 is fewer"),
        (["tools", "log", "append", "--data-dir", "/tmp/x", "--aggregates", "5", "--last-day", "soon"], 2, "--last-day: 'soon'"),
        (["tools", "log", "append", "--data-dir", "/tmp/x", "--aggregates", "5", "--tek", "00ff"], 2, "--tek"),
        (
            ["tools", "log", "append", "--data-dir", "/tmp/x", "--aggregates", "5", "--tek", String(repeating: "ab", count: 16), "--per-window", "3"], 2,
            "--per-window: 3: with --tek each window holds one sighting"
        ),
    ]

    @Test(arguments: badInputs)
    func badInputIsNamed(arguments: [String], status: Int32, message: String) throws {
        let run = try ToolRunner.run("gaenctl", arguments)
        #expect(run.status == status)
        #expect(run.standardError.contains(message), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/x"))
    }

    @Test func anEmptyDataDirectoryHasNoRecords() throws {
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        let stats = try ToolRunner.run("gaenctl", ["tools", "log", "stats", "--data-dir", data])
        #expect(stats.status == 0)
        #expect(stats.standardOutput.contains("no contact log records"))
        #expect(try ToolRunner.run("gaenctl", ["tools", "log", "verify", "--data-dir", data]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: data + "/contacts"))
    }
}
