// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Testing

/// Issue 40, items 10 and 11, on the release gaend: a key server that trickles its index is given
/// up within `download-timeout` per attempt and the run fails naming why, and waiting on a server
/// that accepts and never answers costs gaend no CPU. Before, URLSession downloaded a trickle for
/// over 23 minutes with the timer dead, and burnt 8.3 s of CPU in 10 s of waiting.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct SlowServerDaemonTests {
    @Test func aTricklingServerIsGivenUpAndNamed() async throws {
        let directory = try TemporaryDirectory()
        let (_, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x8182_8384_8586_8788)
        defer { withExtendedLifetime(planted) {} }
        // The index, a byte every half second: 6 bytes take 3 s, past a 1 s limit.
        try await planted.server.set(["/index.txt": HTTPFixture.Route(body: Array("1.zip\n".utf8), trickleSeconds: 0.5)])
        let harness = try ManagerHarness(directory: directory, arguments + ["--download-timeout", "1"])
        let started = ContinuousClock.now
        let detected = try harness.ctl(["detect"])
        let took = ContinuousClock.now - started
        #expect(detected.status == 1, "\(detected.standardOutput)\(detected.standardError)")
        #expect(detected.standardError.contains("no complete answer within 1.0 seconds"), "\(detected.standardError)")
        // Four attempts of at most 1 s, and the backoff between them (2 + 4 + 8 s): about 18 s,
        // bounded generously for CI's loaded cores.
        #expect(took < .seconds(60), "\(took)")
        let error = try harness.status()["last_detection_error"] as? String ?? ""
        #expect(error.contains("no complete answer within"), "\(error)")
        print("a key server trickling its index (a byte every 0.5 s) given up after \(took) (4 attempts of 1 s and 14 s of backoff)")
        #expect(harness.stop() == .success)
    }

    @Test func waitingOnASilentServerCostsNoCPU() async throws {
        let directory = try TemporaryDirectory()
        let (_, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x9192_9394_9596_9798)
        defer { withExtendedLifetime(planted) {} }
        try await planted.server.set(["/index.txt": HTTPFixture.Route(body: Array("1.zip\n".utf8), held: true)])
        let harness = try ManagerHarness(directory: directory, arguments)
        let gaenctl = try ToolRunner.productsDirectory().appendingPathComponent("gaenctl")
        let detect = Process()
        detect.executableURL = gaenctl
        detect.arguments = ["detect", "--bus", harness.bus.address]
        detect.standardOutput = FileHandle.nullDevice
        detect.standardError = FileHandle.nullDevice
        try detect.run()
        defer {
            if detect.isRunning { kill(detect.processIdentifier, SIGTERM) }
            detect.waitUntilExit()
        }
        // The request is in flight once the server holds it.
        try await eventually("the held request") { try await planted.server.requests().contains { $0.path == "/index.txt" } }
        let pid = harness.gaendProcess
        let before = FloodCapTests.cpuSeconds(of: pid)
        let switchesBefore = Self.contextSwitches(of: pid)
        try await Task.sleep(for: .seconds(5))
        let spent = FloodCapTests.cpuSeconds(of: pid) - before
        let switchesAfter = Self.contextSwitches(of: pid)
        // Wake-ups as gaen-bench idle counts them: each thread's context switches, for the
        // threads there before and after.
        let wakeUps = switchesAfter.reduce(0) { $0 + max(0, $1.value - (switchesBefore[$1.key] ?? $1.value)) }
        // The worker answers while its run waits (issue 40, item 15: a run's bookkeeping once held
        // the API for minutes, and gaenctl called a busy gaend "not running").
        let status = try harness.ctl(["status", "--timeout", "5"])
        #expect(status.status == 0, "\(status.standardError)")
        #expect(status.standardOutput.contains("LastDetectionTime"), "\(status.standardOutput)")
        try await planted.server.release("/index.txt")
        print("gaend waiting 5 s on a key server that does not answer: \(spent) s of CPU, \(wakeUps) wake-ups")
        #expect(spent < 0.25, "\(spent) s of CPU in 5 s of waiting")
        #expect(wakeUps < 50, "\(wakeUps) wake-ups in 5 s of waiting")
        #expect(harness.stop() == .success)
    }

    /// Each thread's context switches, voluntary and not, by thread id (/proc/PID/task/*/status).
    static func contextSwitches(of pid: pid_t) -> [Int: Int] {
        var threads = [Int: Int]()
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            guard let id = Int(task), let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            threads[id] = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }.reduce(0) {
                $0 + (Int($1.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0)
            }
        }
        return threads
    }
}
