// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Logging
import Storage
import Testing
import SystemCalls

/// Kill -9 a writer appending at full speed, many times, and check that nothing it had synced is
/// lost and nothing on disk is corrupt.
@Suite(.ownThreads) struct ContactLogCrashTests {
    @Test(.timeLimit(.minutes(5)))
    func killingTheWriterLosesNothingSyncedAndCorruptsNothing() async throws {
        var generator = SplitMix64(seed: UInt64(UInt32.random(in: 0...UInt32.max)))
        let seedText = "crash test seed \(generator.state)"
        // One day for the whole test, so that a run across UTC midnight generates the same records.
        let today = UTCDay(containing: SystemWallClock().now())
        var tornTails = 0
        var killedMidWindow = 0
        for round in 0..<50 {
            let directory = try TemporaryDirectory()
            let data = DataDirectory(path: directory.path + "/gaend")
            let seed = generator.next()
            let extraMicroseconds = useconds_t(generator.next() % 3000)
            // Large windows and rarer syncs make a kill inside a write likelier.
            let perWindow = [50, 200, 1000, 2000][Int(generator.next() % 4)]
            let syncEvery = [1, 4, 16][Int(generator.next() % 3)]
            // Kill somewhere within the first ~10,000 aggregates, so each round stays short.
            let waitForLines = Int(generator.next() % UInt64(max(1, 10_000 / (perWindow * syncEvery)))) + 1

            let synced = try Self.appendUntilKilled(
                data: data, seed: seed, day: today, perWindow: perWindow, syncEvery: syncEvery, afterLines: waitForLines,
                extraMicroseconds: extraMicroseconds)
            #expect(synced > 0, "\(seedText), round \(round)")

            // Readers see at most a torn tail, never damage in the middle.
            let before = try ContactLogReader(dataDirectory: data).verify()
            #expect(before.segments.allSatisfy { $0.problems.isEmpty && $0.unreadable == nil }, "\(seedText), round \(round)")
            if before.segments.contains(where: { $0.tornTailBytes > 0 }) { tornTails += 1 }

            // The log opens (recovering), and is then intact.
            do {
                let writer = try ContactLogWriter(
                    dataDirectory: data, clock: SystemWallClock(), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
                _ = await writer.recovery
            }
            let verify = try ToolRunner.run("gaenctl", ["tools", "log", "verify", "--data-dir", data.path])
            #expect(verify.status == 0, "\(seedText), round \(round): \(verify.standardOutput)")

            // Every synced aggregate is there, in order, exactly as generated.
            var stored = [ContactAggregate]()
            try ContactLogReader(dataDirectory: data).forEachRecord { record in
                if case .aggregate(let aggregate) = record { stored.append(aggregate) }
            }
            #expect(stored.count >= synced, "\(seedText), round \(round)")
            if stored.count % perWindow != 0 { killedMidWindow += 1 }
            let synthetic = SyntheticContacts(
                seed: seed, distinctRPIs: 100_000, aggregatesPerWindow: perWindow, days: 1, lastDay: today,
                totalAggregates: 50_000_000)
            var expected = [ContactAggregate]()
            var window = 0
            while expected.count < stored.count {
                expected += synthetic.window(window).aggregates
                window += 1
            }
            #expect(Array(expected.prefix(stored.count)) == stored, "\(seedText), round \(round)")
        }
        // Not assertions: what the kills hit, for the record.
        print("crash test: 50 kills, \(tornTails) left a torn tail, \(killedMidWindow) stopped inside a window")
    }

    /// Starts `gaenctl tools log append`, reads its `synced N` lines, kills it with SIGKILL after
    /// `afterLines` of them and a little more, and returns the last N it reported.
    static func appendUntilKilled(
        data: DataDirectory, seed: UInt64, day: UTCDay, perWindow: Int, syncEvery: Int, afterLines: Int,
        extraMicroseconds: useconds_t
    ) throws -> Int {
        let process = Process()
        process.executableURL = try ToolRunner.productsDirectory().appendingPathComponent("gaenctl")
        process.arguments = [
            "tools", "log", "append", "--data-dir", data.path, "--aggregates", "50000000", "--per-window", "\(perWindow)",
            "--days", "1", "--last-day", "\(day)", "--seed", "\(seed)", "--sync-every", "\(syncEvery)",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitForExit()
        }
        var buffer = ""
        var lines = 0
        var synced = 0
        let reader = output.fileHandleForReading
        while lines < afterLines {
            let data = reader.availableData
            if data.isEmpty { break }  // the child exited
            buffer += String(decoding: data, as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                let line = buffer[..<newline]
                buffer = String(buffer[buffer.index(after: newline)...])
                if line.hasPrefix("synced "), let count = Int(line.dropFirst(7)) {
                    synced = count
                    lines += 1
                }
            }
        }
        usleep(extraMicroseconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitForExit()
        // Lines written before the kill but not read yet count too: the child synced them.
        buffer += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        for line in buffer.split(separator: "\n") where line.hasPrefix("synced ") {
            if let count = Int(line.dropFirst(7)) { synced = max(synced, count) }
        }
        return synced
    }
}
