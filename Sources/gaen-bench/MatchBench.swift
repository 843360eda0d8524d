// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import BaselineC
import ContactLog
import Detection
import ENCore
import ENCrypto
import Foundation
import Glibc
import KeyFiles
import Logging
import Storage
import SystemCalls

/// Matching throughput: N diagnosis keys against a 14-day log of M distinct RPIs with planted
/// matches, with all cores and with one, beside a plain C loop of the same work.
struct MatchBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "match", abstract: "Matching: keys/s against a synthetic 14-day log with planted matches, beside a plain C loop.")

    @Option(help: "Diagnosis keys to match.")
    var keys = 1_000_000

    @Option(help: "Distinct RPIs in the log (one aggregate each, over 14 days).")
    var distinctRpis = 100_000

    @Option(help: "Keys planted in the log (each heard once).")
    var planted = 100

    @Flag(help: "Measure gaend on one core only (for profiling it with perf).")
    var gaendOnly = false

    @Option(help: "Where to write the synthetic log (a fresh folder inside, removed after).")
    var directory = FileManager.default.currentDirectoryPath + "/.build"

    func run() async throws {
        let root = directory + "/gaen-bench-match-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let clock = SystemWallClock()
        let today = UTCDay(containing: clock.now())
        let firstDay = today.advanced(by: -13)
        let data = DataDirectory(path: root)
        var generator = SplitMix64(seed: 7)

        // The log: M random RPIs over 14 days, then one aggregate for each planted key.
        let crypto = try ExposureKeyCrypto()
        let metadata = BluetoothMetadata.version1_1(txPower: -10, calibrationConfidence: .lowest)
        var plantedKeys = [DiagnosisKey]()
        do {
            let writer = try ContactLogWriter(dataDirectory: data, clock: clock, policy: .kernelDecides, logger: quiet)
            // Exactly M distinct RPIs: numbered, one aggregate each, in windows of 1,000 spread over the days.
            try await SyntheticLog.write(writer, distinctRPIs: distinctRpis, lastDay: today)
            for number in 0..<planted {
                let day = firstDay.advanced(by: Int64(number % 13))
                let key = try TemporaryExposureKey(
                    keyData: Bytes16(words: (generator.next(), generator.next())), rollingStartIntervalNumber: day.firstInterval!)
                let interval = key.rollingStartIntervalNumber.advanced(by: Int(generator.next() % 144))
                let (rpik, aemk) = crypto.keys(for: key.keyData)
                let rpi = crypto.rpi(rpik: rpik, interval: interval)
                var rssi = RSSISummary()
                rssi.add(-60)
                let seen = interval.start.adding(seconds: 30)
                let aggregate = ContactAggregate(
                    rpi: rpi, aem: crypto.aem(for: metadata, aemk: aemk, rpi: rpi), firstSeen: seen, lastSeen: seen.adding(seconds: 2),
                    reports: 1, rssi: rssi, previousScanEnd: seen.adding(seconds: -240))
                let window = ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1,
                    previousScanEnd: nil, monotonicMilliseconds: 4000)
                try await writer.append(window: window, aggregates: [aggregate])
                plantedKeys.append(DiagnosisKey(key: key, transmissionRiskLevel: 4, reportType: .confirmedTest))
            }
            try await writer.sync()
        }
        // N keys: random ones of the same 14 days, with the planted ones among them.
        var diagnosisKeys = SyntheticLog.keys(keys - plantedKeys.count, lastDay: today, generator: &generator)
        diagnosisKeys += plantedKeys
        diagnosisKeys.shuffle(using: &generator)

        let timer = ContinuousClock()
        var index: MatchingIndex?
        let indexTime = try timer.measure { index = try MatchingIndex(reader: ContactLogReader(dataDirectory: data)) }
        let matcher = Matcher(index: index!)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var result: (matches: [KeyMatch], statistics: MatchStatistics)?
        if gaendOnly {
            let time = try await timer.measure { result = try await matcher.match(diagnosisKeys, parallelism: 1) }
            print("gaend, 1 core: \(Figures.grouped(Double(diagnosisKeys.count) / Figures.seconds(time))) keys/s; \(result!.statistics)")
            return
        }
        let allCores = try await timer.measure { result = try await matcher.match(diagnosisKeys, parallelism: cores) }
        let found = Set(result!.matches.map(\.key.key.keyData))
        let expected = Set(plantedKeys.map(\.key.keyData))
        let oneCore = try await timer.measure { _ = try await matcher.match(diagnosisKeys, parallelism: 1) }

        // The plain loop: the same keys, the same RPIs in a simple hash set, in C.
        var rpiBytes = [UInt8]()
        rpiBytes.reserveCapacity((distinctRpis + planted) * 16)
        try ContactLogReader(dataDirectory: data).forEachRecord { record in
            if case .aggregate(let aggregate) = record { rpiBytes += aggregate.rpi.bytes.bytes }
        }
        let set = cgaend_bench_set_build(rpiBytes, rpiBytes.count / 16)
        defer { cgaend_bench_set_free(set) }
        let teks = diagnosisKeys.flatMap(\.key.keyData.bytes)
        let starts = diagnosisKeys.map(\.key.rollingStartIntervalNumber.rawValue)
        let setAddress = UInt(bitPattern: set)
        let plainAll = try await timer.measure {
            let halves = Self.split(diagnosisKeys.count, into: cores)
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for range in halves {
                    group.addTask {
                        let count = teks.withUnsafeBufferPointer { t in
                            starts.withUnsafeBufferPointer { s in
                                cgaend_bench_plain_match(
                                    t.baseAddress! + range.lowerBound * 16, s.baseAddress! + range.lowerBound, range.count,
                                    UnsafeRawPointer(bitPattern: setAddress))
                            }
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            precondition(counts == expected.count, "the plain loop found \(counts) keys, \(expected.count) planted")
        }
        let plainOne = timer.measure {
            _ = cgaend_bench_plain_match(teks, starts, diagnosisKeys.count, set)
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)

        func rate(_ duration: Duration) -> String { Figures.grouped(Double(diagnosisKeys.count) / Figures.seconds(duration)) }
        print("gaen-bench match: \(diagnosisKeys.count) keys against \(index!.distinctRPIs) distinct RPIs over 14 days, \(planted) planted")
        print("  planted keys found        \(found.intersection(expected).count) of \(expected.count), \(found.subtracting(expected).count) false")
        print("  index build               \(Figures.decimals(Figures.seconds(indexTime), 3)) s (\(index!.memoryBytes / 1024) KiB)")
        print("  gaend, \(cores) cores            \(rate(allCores)) keys/s")
        print("  gaend, 1 core             \(rate(oneCore)) keys/s")
        print("  plain C loop, \(cores) cores     \(rate(plainAll)) keys/s")
        print("  plain C loop, 1 core      \(rate(plainOne)) keys/s")
        print("  gaend / plain, \(cores) cores    \(Figures.decimals(Figures.seconds(plainAll) / Figures.seconds(allCores), 2))x")
        print("  peak memory (max RSS)     \(usage.ru_maxrss / 1024) MiB")
        if found != expected { throw ExitCode.failure }
    }

    static func split(_ count: Int, into parts: Int) -> [Range<Int>] {
        let size = (count + parts - 1) / max(1, parts)
        return stride(from: 0, to: count, by: max(1, size)).map { $0..<min($0 + size, count) }
    }
}
