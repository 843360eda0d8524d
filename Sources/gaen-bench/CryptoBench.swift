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

/// The per-key work of matching against its floor (issue 55): the floor is a C loop doing exactly
/// that work with OpenSSL (HKDF-SHA256 to the RPI key from HMAC midstates, one AES-128-ECB call
/// over the key's 144 intervals), on one core and on all; beside it gaend's derivation
/// (`ExposureKeyCrypto`) and gaend's matching (`Matcher` over an index of a small fortnight), each
/// as a percentage of the floor. With `--cpu both` (the default) it runs again in a child with
/// AES-NI, PCLMULQDQ and SHA-NI masked (`OPENSSL_ia32cap`): what a Cortex-A without crypto
/// extensions (a Raspberry Pi's) resembles, table-driven AES and SHA-256 in software.
struct CryptoBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto",
        abstract: "Keys per second of the per-key work: a C floor with OpenSSL beside gaend's derivation and matching, 1 core and all.")

    enum CPU: String, ExpressibleByArgument, CaseIterable {
        case native, masked, both
    }

    /// Clears AES-NI and PCLMULQDQ (CPUID.1:ECX bits 25 and 1) and SHA-NI (CPUID.7:EBX bit 29) in
    /// OpenSSL's view of the processor (OPENSSL_ia32cap(3)).
    static let maskedCapabilities = "~0x200000200000000:~0x20000000"

    @Option(help: "Keys per measured run.")
    var keys = 200_000

    @Option(help: "Measured runs of each path; the best run is reported.")
    var runs = 5

    @Option(help: "Distinct RPIs in the fortnight gaend's matching runs against.")
    var distinctRpis = 10_000

    @Option(help: "native: the processor as it is; masked: AES-NI and SHA-NI masked; both: native here, masked in a child.")
    var cpu = CPU.both

    @Flag(help: "Measure gaend's derivation only, on one core (for profiling it with perf).")
    var gaendOnly = false

    @Option(help: "Where to write the fortnight (a fresh folder inside, removed after).")
    var directory = FileManager.default.currentDirectoryPath + "/.build"

    func run() async throws {
        guard keys > 0, runs > 0 else { throw ValidationError("--keys and --runs must be positive") }
        if cpu == .masked, ProcessInfo.processInfo.environment["OPENSSL_ia32cap"] == nil {
            // OpenSSL reads the mask once, at its start: only a new process takes it.
            try printChild(masked: true)
            return
        }
        let random = SystemRandom()
        var randomBytes = [UInt8](repeating: 0, count: keys * 16)
        try randomBytes.withUnsafeMutableBytes { try random.fill($0) }
        let teks = randomBytes
        // Rolling starts spread over 14 days, as in a real export file.
        let firstDay: UInt32 = 2_642_976
        let starts = (0..<keys).map { _ in firstDay + 144 * UInt32.random(in: 0..<14) }
        let crypto = try ExposureKeyCrypto()
        if gaendOnly {
            var folded = Bytes16.zero
            let rate = bestOfRuns { folded = Self.deriveWithSwift(crypto: crypto, teks: teks, starts: starts, range: 0..<keys) }
            print("gaend ExposureKeyCrypto: \(Figures.grouped(rate)) keys/s (XOR \(folded.hex))")
            return
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let masked = ProcessInfo.processInfo.environment["OPENSSL_ia32cap"] != nil
        print(
            "gaen-bench crypto: per key HKDF-SHA256 (RPIK) and one AES-128-ECB call over 144 intervals; \(keys) keys, best of \(runs); "
                + (masked ? "AES-NI and SHA-NI masked (OPENSSL_ia32cap=\(Self.maskedCapabilities))" : "the processor's own instructions"))
        let matching = try await MatchingFixture(directory: directory, distinctRPIs: distinctRpis, keys: keys)
        defer { matching.remove() }
        print("  \(Figures.padded("", 36))\(Figures.padded("1 core", 28))\(cores) cores")
        var folded = (floor: [UInt8](), gaend: [UInt8]())
        // A day's filter of the fortnight (1,000 RPIs, 512 words), for the floor's probes.
        let probe = Self.syntheticFilter(distinct: 1000)
        // The table's rows, filled one core count at a time.
        var rows: [(name: String, rates: [Double])] = []
        for parallelism in [1, cores] {
            let floor = try await best {
                folded.floor = try await Self.inParallel(keys, parallelism) { range in
                    var xor = [UInt8](repeating: 0, count: 16)
                    let status = teks.withUnsafeBufferPointer { t in
                        starts.withUnsafeBufferPointer { s in
                            cgaend_bench_floor_derive(t.baseAddress! + range.lowerBound * 16, s.baseAddress! + range.lowerBound, range.count, &xor)
                        }
                    }
                    guard status == 0 else { throw ValidationError("the C floor loop failed") }
                    return xor
                }
            }
            let probed = try await best {
                _ = try await Self.inParallel(keys, parallelism) { range in
                    var candidates = 0
                    let status = teks.withUnsafeBufferPointer { t in
                        starts.withUnsafeBufferPointer { s in
                            cgaend_bench_floor_probe(
                                t.baseAddress! + range.lowerBound * 16, s.baseAddress! + range.lowerBound, range.count, probe.words, probe.shift,
                                probe.seed.0, probe.seed.1, &candidates)
                        }
                    }
                    guard status == 0 else { throw ValidationError("the C floor loop failed") }
                    return [UInt8](repeating: UInt8(truncatingIfNeeded: candidates), count: 16)
                }
            }
            let derive = try await best {
                folded.gaend = try await Self.inParallel(keys, parallelism) { range in
                    // One context a task, as the matcher has: a context is not shared between threads.
                    Self.deriveWithSwift(crypto: try ExposureKeyCrypto(), teks: teks, starts: starts, range: range).bytes
                }
            }
            let match = try await best { _ = try await matching.matcher.match(matching.keys, parallelism: parallelism) }
            if parallelism == 1 {
                rows = [
                    ("C floor (OpenSSL, gaend's method)", [floor]), ("C floor + matching's probes", [probed]), ("gaend derivation", [derive]),
                    ("gaend matching", [match]),
                ]
            } else {
                rows[0].rates.append(floor)
                rows[1].rates.append(probed)
                rows[2].rates.append(derive)
                rows[3].rates.append(match)
            }
        }
        for (name, rates) in rows {
            let cells = rates.enumerated().map { column, rate in
                let share = rows[0].rates[column] > 0 ? " (\(Figures.decimals(100 * rate / rows[0].rates[column], 0)) %)" : ""
                return Figures.padded("\(Figures.grouped(rate)) keys/s" + (name == rows[0].name ? "" : share), 28)
            }
            print("  \(Figures.padded(name, 36))\(cells.joined())")
        }
        let agree = folded.floor == folded.gaend
        print("  \(Figures.padded("derivations agree", 36))\(agree ? "yes" : "NO")")
        if !agree { throw ExitCode.failure }
        if cpu == .both {
            print("")
            try printChild(masked: true)
        }
    }

    /// This benchmark again in a child, with the crypto instructions masked.
    private func printChild(masked: Bool) throws {
        let arguments = [
            "crypto", "--cpu", "native", "--keys", "\(keys)", "--runs", "\(runs)", "--distinct-rpis", "\(distinctRpis)", "--directory", directory,
        ]
        let child = try ChildRun(CommandLine.arguments[0], arguments, environment: masked ? ["OPENSSL_ia32cap": Self.maskedCapabilities] : [:])
        print(child.output, terminator: "")
        if child.status != 0 { throw ExitCode.failure }
    }

    /// The RPIs of `range`'s keys, folded by XOR so the work is observable.
    static func deriveWithSwift(crypto: ExposureKeyCrypto, teks: [UInt8], starts: [UInt32], range: Range<Int>) -> Bytes16 {
        var accumulator = (UInt64(0), UInt64(0))
        let buffer = UnsafeMutablePointer<RollingProximityIdentifier>.allocate(capacity: 144)
        defer { buffer.deallocate() }
        teks.withUnsafeBytes { raw in
            for index in range {
                let tek = Bytes16(loadingFrom: raw.baseAddress! + index * 16)
                crypto.rpis(rpik: crypto.rpik(for: tek), startingAt: ENIntervalNumber(rawValue: starts[index]), count: 144, into: buffer)
                for block in 0..<144 {
                    accumulator.0 ^= buffer[block].bytes.words.0
                    accumulator.1 ^= buffer[block].bytes.words.1
                }
            }
        }
        return Bytes16(words: accumulator)
    }

    /// `body` over `count` keys cut into `parallelism` ranges, one task each; the ranges' 16-byte
    /// folds XORed together.
    static func inParallel(_ count: Int, _ parallelism: Int, _ body: @escaping @Sendable (Range<Int>) throws -> [UInt8]) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for range in MatchBench.split(count, into: parallelism) { group.addTask { try body(range) } }
            var folded = [UInt8](repeating: 0, count: 16)
            for try await part in group { folded = zip(folded, part).map { $0 ^ $1 } }
            return folded
        }
    }

    /// A blocked Bloom filter as full as a day's of `distinct` RPIs (32 bits each, a power of two
    /// words), random pairs set as `DayFilters` sets them, with a random seed: what the C floor
    /// probes. Its words are never freed (one per run of the benchmark).
    static func syntheticFilter(distinct: Int) -> ProbeFilter {
        var count = 16
        while count * 64 < distinct * 32 { count <<= 1 }
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
        words.initialize(repeating: 0, count: count)
        let offsets = [1, 17, 29, 43]
        for _ in 0..<distinct {
            let pair = Int.random(in: 0..<256)
            words[Int.random(in: 0..<count)] |= (1 as UInt64) << (pair & 63) | (1 as UInt64) << ((pair & 63 + offsets[pair >> 6]) & 63)
        }
        return ProbeFilter(
            words: UnsafePointer(words), shift: UInt32(64 - count.trailingZeroBitCount),
            seed: (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max) | 1))
    }

    /// The C floor's filter. @unchecked: written once before the runs, only read by them.
    struct ProbeFilter: @unchecked Sendable {
        let words: UnsafePointer<UInt64>
        let shift: UInt32
        let seed: (UInt64, UInt64)
    }

    /// Runs `body` `runs` times and returns the best rate in keys per second.
    private func best(_ body: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        var fastest = Duration.seconds(1_000_000)
        for _ in 0..<runs {
            let start = clock.now
            try await body()
            fastest = min(fastest, clock.now - start)
        }
        return Double(keys) / Figures.seconds(fastest)
    }

    private func bestOfRuns(_ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        var fastest = Duration.seconds(1_000_000)
        for _ in 0..<runs { fastest = min(fastest, clock.measure(body)) }
        return Double(keys) / Figures.seconds(fastest)
    }

}

/// gaend's matcher over an index of a small fortnight, and keys of its days to match.
struct MatchingFixture: Sendable {
    let root: String
    let matcher: Matcher
    let keys: [DiagnosisKey]

    init(directory: String, distinctRPIs: Int, keys count: Int) async throws {
        root = directory + "/gaen-bench-crypto-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let clock = SystemWallClock()
        let today = UTCDay(containing: clock.now())
        let data = DataDirectory(path: root)
        let writer = try ContactLogWriter(
            dataDirectory: data, clock: clock, policy: .kernelDecides, logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await SyntheticLog.write(writer, distinctRPIs: distinctRPIs, lastDay: today)
        try await writer.sync()
        matcher = Matcher(index: try MatchingIndex(reader: ContactLogReader(dataDirectory: data)))
        var generator = SplitMix64(seed: 11)
        keys = SyntheticLog.keys(count, lastDay: today, generator: &generator)
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}
