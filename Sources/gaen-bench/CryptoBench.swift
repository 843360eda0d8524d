// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import BaselineC
import ENCore
import ENCrypto

/// Derivation throughput: RPIK by HKDF plus the 144 RPIs of a key, on one core, for gaend's
/// `ExposureKeyCrypto`, for a plain C loop of the usual libcrypto calls (an HKDF context per key),
/// and for C doing exactly what gaend does (the floor the Swift code can approach).
struct CryptoBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto",
        abstract: "Keys per second for HKDF + 144 RPIs on one core, beside a plain C libcrypto loop.")

    @Option(help: "Keys per measured run.")
    var keys = 200_000

    @Option(help: "Measured runs of each path; the best run is reported.")
    var runs = 5

    @Flag(help: "Measure gaend's path only (for profiling it with perf).")
    var gaendOnly = false

    func run() throws {
        guard keys > 0, runs > 0 else { throw ValidationError("--keys and --runs must be positive") }
        // Random keys with rolling starts spread over 14 days, as in a real export file.
        let random = SystemRandom()
        var teks = [UInt8](repeating: 0, count: keys * 16)
        try teks.withUnsafeMutableBytes { try random.fill($0) }
        let firstDay: UInt32 = 2_642_976
        let starts = (0..<keys).map { _ in firstDay + 144 * UInt32.random(in: 0..<14) }

        let crypto = try ExposureKeyCrypto()
        var swiftXor = Bytes16.zero
        let swiftRate = best(of: runs) {
            swiftXor = Self.deriveWithSwift(crypto: crypto, teks: teks, starts: starts)
        }
        if gaendOnly {
            print("gaend ExposureKeyCrypto: \(Figures.grouped(swiftRate)) keys/s (XOR \(swiftXor.hex))")
            return
        }
        var plainXor = [UInt8](repeating: 0, count: 16)
        let plainRate = best(of: runs) {
            let status = cgaend_bench_plain_derive(teks, starts, keys, &plainXor)
            precondition(status == 0, "the plain libcrypto loop failed")
        }
        var floorXor = [UInt8](repeating: 0, count: 16)
        let floorRate = best(of: runs) {
            let status = cgaend_bench_floor_derive(teks, starts, keys, &floorXor)
            precondition(status == 0, "the C floor loop failed")
        }

        print("gaen-bench crypto: HKDF-SHA256 (RPIK) + 144 RPIs per key, one core, \(keys) keys, best of \(runs)")
        print("  gaend ExposureKeyCrypto   \(Figures.grouped(swiftRate)) keys/s  (\(Figures.grouped(1e9 / swiftRate)) ns/key)")
        print("  plain C libcrypto loop    \(Figures.grouped(plainRate)) keys/s  (\(Figures.grouped(1e9 / plainRate)) ns/key)")
        print("  C, same method as gaend   \(Figures.grouped(floorRate)) keys/s  (\(Figures.grouped(1e9 / floorRate)) ns/key)")
        print("  gaend / plain C           \(Figures.decimals(swiftRate / plainRate, 2))x")
        print("  gaend / C same method     \(Figures.decimals(swiftRate / floorRate, 2))x")
        let agree = swiftXor.bytes == plainXor && plainXor == floorXor
        print("  outputs agree             \(agree ? "yes" : "NO")")
        if !agree { throw ExitCode.failure }
    }

    /// The RPIs of every key, folded by XOR so the work is observable.
    static func deriveWithSwift(crypto: ExposureKeyCrypto, teks: [UInt8], starts: [UInt32]) -> Bytes16 {
        var accumulator = (UInt64(0), UInt64(0))
        let buffer = UnsafeMutablePointer<RollingProximityIdentifier>.allocate(capacity: 144)
        defer { buffer.deallocate() }
        teks.withUnsafeBytes { raw in
            for index in starts.indices {
                let tek = Bytes16(loadingFrom: raw.baseAddress! + index * 16)
                crypto.rpis(
                    rpik: crypto.rpik(for: tek), startingAt: ENIntervalNumber(rawValue: starts[index]), count: 144,
                    into: buffer)
                for block in 0..<144 {
                    accumulator.0 ^= buffer[block].bytes.words.0
                    accumulator.1 ^= buffer[block].bytes.words.1
                }
            }
        }
        return Bytes16(words: accumulator)
    }

    /// Runs `body` `count` times and returns the best rate in keys per second.
    private func best(of count: Int, _ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        var fastest = Duration.seconds(1_000_000)
        for _ in 0..<count {
            let elapsed = clock.measure(body)
            fastest = min(fastest, elapsed)
        }
        return Double(keys) / Figures.seconds(fastest)
    }
}
