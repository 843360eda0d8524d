// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import Foundation
import Logging
import Storage
import SystemCalls

/// Contact log figures: appends per second with the durability policy on, bytes per aggregate,
/// and the time to open a 14-day log and build the matching index.
struct LogBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Contact log: appends/s with fsync per window, bytes per aggregate, index build time.")

    @Option(help: "Aggregates appended in the append figure.")
    var aggregates = 1_000_000

    @Option(help: "Aggregates per scan window (one fsync each).")
    var perWindow = 1000

    @Option(help: "Aggregates per day in the index figure.")
    var perDay = 100_000

    @Option(help: "Days in the index figure.")
    var days = 14

    @Option(help: "Where to write (a real disk, not tmpfs); a fresh folder is made and removed inside it.")
    var directory = FileManager.default.currentDirectoryPath + "/.build"

    func run() async throws {
        let root = directory + "/gaen-bench-log-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let clock = SystemWallClock()
        let today = UTCDay(containing: clock.now())
        let timer = ContinuousClock()

        // 1. Appends with an fsync at the end of every window, as the daemon writes.
        let appendData = DataDirectory(path: root + "/append")
        let synthetic = SyntheticContacts(
            seed: 1, distinctRPIs: 100_000, aggregatesPerWindow: perWindow, days: 1, lastDay: today, totalAggregates: aggregates)
        let windows = (0..<synthetic.windowCount).map { synthetic.window($0) }
        let writer = try ContactLogWriter(dataDirectory: appendData, clock: clock, policy: .everyWindow, logger: quiet)
        let appendTime = try await timer.measure {
            for (window, records) in windows {
                try await writer.append(window: window, aggregates: records)
            }
        }
        let appendSeconds = Figures.seconds(appendTime)
        let bytes = try Self.segmentBytes(appendData)
        print("gaen-bench log: \(aggregates) aggregates in windows of \(perWindow), fsync per window, in \(root)")
        print(
            "  appends                   \(Figures.grouped(Double(aggregates) / appendSeconds)) aggregates/s (\(windows.count) fsyncs in \(Figures.decimals(appendSeconds, 2)) s)"
        )
        print(
            "  on disk                   \(Figures.decimals(Double(bytes) / Double(aggregates), 2)) bytes/aggregate (48 per record; header and window records included)"
        )

        // 2. A 14-day log of `perDay` aggregates a day, written without fsync to save time.
        let indexData = DataDirectory(path: root + "/index")
        do {
            let bulk = try ContactLogWriter(dataDirectory: indexData, clock: clock, policy: .kernelDecides, logger: quiet)
            let spread = SyntheticContacts(
                seed: 2, distinctRPIs: perDay, aggregatesPerWindow: perWindow, days: days, lastDay: today,
                totalAggregates: perDay * days)
            for index in 0..<spread.windowCount {
                let (window, records) = spread.window(index)
                try await bulk.append(window: window, aggregates: records)
            }
            try await bulk.sync()
        }
        let reader = ContactLogReader(dataDirectory: indexData)
        var index: MatchingIndex?
        let openTime = try timer.measure {
            _ = try ContactLogWriter(dataDirectory: indexData, clock: clock, logger: quiet)
        }
        let indexTime = try timer.measure { index = try MatchingIndex(reader: reader) }
        let built = index!
        print("  \(days)-day log, \(perDay) aggregates/day (\(built.aggregateCount) aggregates, \(built.distinctRPIs) distinct RPIs, page cache warm)")
        print("  writer open + recovery    \(Figures.decimals(Figures.seconds(openTime), 3)) s")
        print("  matching index build      \(Figures.decimals(Figures.seconds(indexTime), 3)) s (\(built.memoryBytes / 1_048_576) MiB)")
        if Self.dropPageCache() {
            let coldTime = try timer.measure { index = try MatchingIndex(reader: reader) }
            print("  matching index build      \(Figures.decimals(Figures.seconds(coldTime), 3)) s (page cache dropped)")
        }
    }

    static func segmentBytes(_ data: DataDirectory) throws -> Int64 {
        let contacts = data.subdirectory("contacts")
        return try contacts.entries().filter { $0.hasSuffix(".log") }.reduce(0) { $0 + (try AtomicFile.size(of: contacts.path(of: $1))) }
    }

    /// Drops the kernel's page cache when allowed (root), so a cold open can be measured.
    static func dropPageCache() -> Bool {
        sync()
        guard let handle = FileHandle(forWritingAtPath: "/proc/sys/vm/drop_caches") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("3\n".utf8))) != nil
    }
}
