// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import BaselineC
import ContactLog
import ENCore
import Foundation
import Glibc
import KeyFiles
import Storage
import SystemCalls

/// Detection on a crowded fortnight: `gaenctl tools match` (the release binary beside this one) as
/// a process, its peak RSS and time, for logs and key counts of every size asked, beside the plain
/// C loop's matching time on the same keys.
struct BusyDetectionBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "busy-detection",
        abstract: "Detection of a busy fortnight: peak RSS and time of gaenctl tools match, beside a plain C loop.")

    @Option(parsing: .upToNextOption, help: "Aggregates in the 14-day log (each size is a run).")
    var aggregates: [Int] = [250_000, 2_500_000, 10_000_000]

    @Option(parsing: .upToNextOption, help: "Diagnosis keys (each count is a run with every log size).")
    var keys: [Int] = [100_000, 1_400_000]

    @Option(help: "Distinct RPIs the aggregates are drawn from: as many as the aggregates make a log of several day indexes.")
    var distinctRpis = 100_000

    @Option(help: "Another gaenctl to run on the same fixtures beside this one's (an older build), for a side-by-side figure.")
    var compareWith: String?

    @Option(help: "Runs of each gaenctl on each fixture, interleaved; the best time and the largest peak RSS are printed.")
    var runs = 3

    @Option(help: "Where to write the fixtures (a fresh folder inside, removed after).")
    var directory = FileManager.default.currentDirectoryPath + "/.build"

    func run() async throws {
        guard runs > 0 else { throw ValidationError("--runs must be positive") }
        let root = directory + "/gaen-bench-busy-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let today = UTCDay(containing: SystemWallClock().now())
        let gaenctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/gaenctl"
        print(
            "gaen-bench busy-detection: gaenctl tools match as a process (\(gaenctl)), one planted exposure heard 20 times; "
                + "best time and largest peak RSS of \(runs) runs" + (compareWith == nil ? "" : ", interleaved with the other gaenctl's"))
        print(
            "  aggregates   keys        peak RSS   time      plain C loop (matching only, 1 core)"
                + (compareWith.map { "   \($0): peak RSS, time" } ?? ""))
        var failed = false
        for keyCount in keys {
            for aggregateCount in aggregates {
                let folder = root + "/\(aggregateCount)-\(keyCount)"
                // Written by a child, so that this process stays small while it spawns the measured one.
                let made = try ChildRun(
                    CommandLine.arguments[0],
                    [
                        "busy-fixture", "--out", folder, "--aggregates", "\(aggregateCount)", "--keys", "\(keyCount)", "--distinct-rpis",
                        "\(min(distinctRpis, aggregateCount))",
                    ])
                guard made.status == 0 else { throw ValidationError("busy-fixture failed: \(made.output)") }
                let fixture = BusyFortnight(existing: folder, keys: keyCount, lastDay: today)
                let arguments =
                    [
                        "tools", "match", "--data-dir", fixture.data, "--config", fixture.configuration, "--public-key", fixture.publicKey,
                        "--key-id", "310", "--key-version", "v1", "--today", "\(today)",
                    ] + fixture.keyFiles
                var mine = [ChildRun]()
                var theirs = [ChildRun]()
                for _ in 0..<runs {
                    mine.append(try ChildRun(gaenctl, arguments))
                    if let compareWith { theirs.append(try ChildRun(compareWith, arguments)) }
                }
                let run = mine.min { $0.seconds < $1.seconds }!
                let peakKiB = mine.map(\.peakKiB).max()!
                let exposed = mine.allSatisfy { $0.output.contains("exposure days: \(fixture.exposureDay)") }
                if !exposed { failed = true }
                let plain = try Self.plainLoop(fixture)
                var other = ""
                if let baseline = theirs.min(by: { $0.seconds < $1.seconds }) {
                    let found = theirs.allSatisfy { $0.output.contains("exposure days: \(fixture.exposureDay)") }
                    other =
                        "   \(theirs.map(\.peakKiB).max()! / 1024) MiB, \(Figures.decimals(baseline.seconds, 2)) s"
                        + " (this one \(Figures.decimals(run.seconds / baseline.seconds, 2))x)\(found ? "" : " (exposure NOT found)")"
                }
                print(
                    "  \(Figures.padded(Figures.grouped(Double(aggregateCount)), 12)) \(Figures.padded(Figures.grouped(Double(keyCount)), 11)) "
                        + "\(Figures.padded("\(peakKiB / 1024) MiB", 10)) \(Figures.padded(Figures.decimals(run.seconds, 2) + " s", 9)) "
                        + "\(Figures.padded(Figures.decimals(plain, 2) + " s", 8))\(other)"
                        + (exposed ? "" : "   (exposure NOT found: \(run.output.prefix(200)))"))
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        if failed { throw ExitCode.failure }
    }

    /// The plain loop's matching time on the fixture's keys: HKDF and 144 RPIs a key, each looked
    /// up in a hash set of the log's distinct RPIs, in C on one core (reading the files not counted).
    static func plainLoop(_ fixture: BusyFortnight) throws -> Double {
        var rpis = Set<Bytes16>()
        try ContactLogReader(dataDirectory: DataDirectory(path: fixture.data)).forEachRecord { record in
            if case .aggregate(let aggregate) = record { rpis.insert(aggregate.rpi.bytes) }
        }
        let rpiBytes = rpis.flatMap(\.bytes)
        var teks = [UInt8]()
        var starts = [UInt32]()
        for file in fixture.keyFiles {
            let export = try KeyFile(zip: [UInt8](Data(contentsOf: URL(fileURLWithPath: file))), policy: SignaturePolicy(trustedKeys: [])).export
            for key in export.keys {
                teks += key.key.keyData.bytes
                starts.append(key.key.rollingStartIntervalNumber.rawValue)
            }
        }
        let set = cgaend_bench_set_build(rpiBytes, rpiBytes.count / 16)
        defer { cgaend_bench_set_free(set) }
        let clock = ContinuousClock()
        let time = clock.measure { _ = cgaend_bench_plain_match(teks, starts, starts.count, set) }
        return Figures.seconds(time)
    }
}

/// A program run to its end with its output, wall time and peak RSS (wait4's rusage, exactly this
/// child's).
struct ChildRun {
    let output: String
    let status: Int32
    let seconds: Double
    let peakKiB: Int

    /// Runs `program`; `environment` is added to this process's own.
    init(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let outputPath = NSTemporaryDirectory() + "gaen-bench-child-\(getpid()).out"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, added in added }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid = pid_t()
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        guard spawned == 0 else { throw ValidationError("\(program): posix_spawn failed (errno \(spawned))") }
        // The peak is the child's own VmHWM, read until it exits: wait4's ru_maxrss would include
        // this process's resident memory, which a vfork-like spawn shares until the exec.
        var exit: Int32 = 0
        var peak = 0
        while true {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
            {
                peak = max(peak, kib)
            }
            let done = waitpid(pid, &exit, WNOHANG)
            if done == pid || (done < 0 && errno != EINTR) { break }
            usleep(2_000)
        }
        seconds = Figures.seconds(ContinuousClock.now - start)
        status = exit
        peakKiB = peak
        output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }
}

/// Writes a busy fortnight for the process suites (`BusyFortnight`) and prints its key files, one a
/// line, after the line `exposure-day YYYY-MM-DD`.
struct BusyFixtureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "busy-fixture", abstract: "Write a busy fortnight's log, key files, public key and configuration (for tests).")

    @Option(help: "The folder to write into (data/, keys-N.zip, export.pem, config.json).")
    var out: String

    @Option(help: "Aggregates in the 14-day log.")
    var aggregates = 2_500_000

    @Option(help: "Diagnosis keys, in files of at most 700,000.")
    var keys = 1_400_000

    @Option(help: "Distinct RPIs the aggregates are drawn from.")
    var distinctRpis = 100_000

    @Option(help: "Aggregates per scan window (5,000 is the window's cap: the largest log).")
    var perWindow = 500

    func run() async throws {
        let fixture = try await BusyFortnight(
            root: out, aggregates: aggregates, keys: keys, lastDay: UTCDay(containing: SystemWallClock().now()), distinctRPIs: distinctRpis,
            perWindow: perWindow)
        print("exposure-day \(fixture.exposureDay)")
        for file in fixture.keyFiles { print(file) }
    }
}
