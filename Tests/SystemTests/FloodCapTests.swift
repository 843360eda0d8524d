// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing

/// A neighbour with a radio: the release gaend, scanning a second in two in the unit's 128 MiB, on a
/// controller that keeps its socket full of reports from a million distinct RPIs
/// (testbed/report_flood.py at full rate). Each window keeps at most 5,000 RPIs, counts what it
/// dropped, warns once; memory stays bounded; and a planted exposure is still found afterwards.
@Suite(.ownThreads) struct FloodCapTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func aFloodedWindowKeepsItsCapAndDetectionStillWorks() async throws {
        guard ProcessInfo.processInfo.environment["GAEND_PRODUCTS_DIR"] != nil, !BuildUnderTest.isSanitized else {
            print("skipped: a flood's figures are for the release binaries (GAEND_PRODUCTS_DIR), not a debug or sanitized build")
            return
        }
        let directory = try TemporaryDirectory()
        guard let cgroup = MemoryCgroup(name: "gaend-flood-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", limitBytes: 128 << 20) else {
            print("skipped: no memory cgroup can be made here (needs root and cgroup v1's or v2's memory controller)")
            return
        }
        defer { cgroup.remove() }
        let data = DataDirectory(path: directory.path + "/data")
        let tek = Bytes16(words: (0x0A0B_0C0D_0E0F_1011, 0x1213_1415_1617_1819))
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let planted = try await PlantedExposure(data: data, pemPath: directory.path + "/export.pem", tek: tek, day: day)

        let socket = directory.path + "/flood.sock"
        let flood = try await ReportFlood(rpis: 1_000_000, seconds: 120, socket: socket)
        defer { flood.stop() }

        let harness = try ManagerHarness(
            directory: directory, launcher: ["/bin/sh", "-c", "echo $$ > \(cgroup.procs) && exec \"$0\" \"$@\""],
            [
                "--radio", "h4+unix:\(socket)", "--scan-window", "1", "--scan-interval", "1-1", "--index-url",
                planted.server.baseURL + "/index.txt", "--export-key", "310:v1:\(directory.path)/export.pem", "--enable", "true",
            ])
        defer { _ = harness.stop() }

        // Three flooded windows written (1 s windows, 1 s apart: short, so that the flood loads
        // the machine's two cores for seconds, not the whole suite's run).
        func windows() throws -> [[String: Any]] {
            let run = try ToolRunner.run(
                "gaenctl",
                ["tools", "log", "export", "--data-dir", data.path, "--from", "\(UTCDay(containing: SystemWallClock().now()).advanced(by: -1))", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
            return (object?["scan_windows"] as? [[String: Any]] ?? []).filter { ($0["gaen_reports"] as? Int ?? 0) > 100 }
        }
        try await eventually("three flooded windows", within: .seconds(60)) { try windows().count >= 3 }
        let idle = BusyDetectionMemoryTests.highWater(of: harness.daemon.processIdentifier)
        let cpu = Self.cpuSeconds(of: harness.daemon.processIdentifier)
        let flooded = try windows()
        for window in flooded {
            let kept = window["aggregates"] as? Int ?? 0
            let reports = window["gaen_reports"] as? Int ?? 0
            let droppedRPIs = window["dropped_rpis"] as? Int ?? 0
            let droppedReports = window["dropped_reports"] as? Int ?? 0
            #expect(kept <= 5000, "\(window)")
            // Every report the window did not keep is counted (the flood sends each RPI once or twice).
            if reports > 5000 {
                #expect(kept == 5000, "\(window)")
                #expect(droppedRPIs > 0 && droppedReports > 0, "\(window)")
            }
            #expect(droppedReports <= reports)
        }
        let warnings = harness.stderr.split(separator: "\n").filter { $0.contains("over its cap of distinct RPIs") }
        let overCap = flooded.filter { ($0["dropped_rpis"] as? Int ?? 0) > 0 }.count
        // One warning a flooded window (a window may have ended since the export was read).
        #expect(warnings.count >= overCap && warnings.count <= overCap + 2, "\(warnings.count) warnings, \(overCap) flooded windows")
        let stats = try ToolRunner.run("gaenctl", ["tools", "log", "stats", "--data-dir", data.path, "--json"])
        #expect(stats.standardOutput.contains(#""dropped_rpis":"#))

        // Detection during the flood: the planted exposure is found, within the limit.
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0, "\(detected.standardError)")
        #expect(detected.standardOutput.contains("exposure on \(day)"), "\(detected.standardOutput)")
        #expect(harness.daemon.isRunning)
        #expect(cgroup.oomKills == 0)
        let highWater = BusyDetectionMemoryTests.highWater(of: harness.daemon.processIdentifier)
        print(
            "gaend under a flood of 1,000,000 RPIs: \(flooded.count) windows of "
                + "\(flooded.map { "\($0["aggregates"] ?? 0) kept/\($0["gaen_reports"] ?? 0) reports" }.joined(separator: ", ")); "
                + "VmHWM \(idle / 1024) MiB before detection, \(highWater / 1024) MiB after; "
                + "\(String(format: "%.1f", cpu)) s of CPU for \(flooded.reduce(0) { $0 + ($1["gaen_reports"] as? Int ?? 0) }) reports "
                + "(all windows so far: \(try windows().count))")
        #expect(highWater <= 64 * 1024, "VmHWM \(highWater) kB")
    }

    /// User and system CPU time of a process so far, seconds (/proc/PID/stat, fields 14 and 15).
    static func cpuSeconds(of pid: Int32) -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// testbed/report_flood.py as the radio: an H4 controller on a unix socket that floods its host
/// with advertising reports of `rpis` distinct RPIs; ended by its PID.
final class ReportFlood: @unchecked Sendable {
    let process = Process()
    /// Where it prints READY and, at its end, SENT n.
    let output: String

    /// `chunksPerSecond` 0: as fast as the host reads (a load on both cores); otherwise paced.
    init(rpis: Int, seconds: Int, chunksPerSecond: Double = 0, socket: String) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            FloodCapTests.repository.appendingPathComponent("testbed/report_flood.py").path, "--rpis", "\(rpis)", "--seconds", "\(seconds)",
            "--chunks-per-second", "\(chunksPerSecond)", socket,
        ]
        output = socket + ".out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        try process.run()
        // Bumble's Python starts slowly on a loaded machine: over 30 s once in a full run.
        try await eventually("the flood's socket", within: .seconds(120)) { FileManager.default.fileExists(atPath: socket) }
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    /// The reports it wrote, once stopped.
    var sent: Int? {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").last { $0.hasPrefix("SENT ") }.flatMap { Int($0.dropFirst(5).prefix { $0.isNumber }) }
    }
}
