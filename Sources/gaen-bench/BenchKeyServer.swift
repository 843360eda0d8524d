// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Foundation
import Glibc

/// `gaen-keyserver serve` as the key-server benchmarks run it: fresh signing keys and data in a
/// work directory of its own, a free port on 127.0.0.1, and `stop()` ending it by its PID.
final class BenchKeyServer {
    static let deviceKey = "bench-device"
    static let adminKey = "bench-admin"

    let path: String
    let work: String
    let process = Process()
    private(set) var port = 0
    var base: String { "http://127.0.0.1:\(port)" }
    var pid: Int32 { process.processIdentifier }

    /// Whether `stop()` removes the work directory: replicas share their first one's.
    let ownsWork: Bool
    /// The data directory's name in `work` (one per replica).
    let dataName: String
    var data: String { work + "/" + dataName }

    /// `server`: the executable, else the gaen-keyserver beside gaen-bench. `replicaOf`: a server
    /// whose work directory, keys and code HMAC key this one shares (a replica on its database).
    init(server: String?, storage: [String], arguments: [String], replicaOf first: BenchKeyServer? = nil, index: Int = 0) throws {
        path = server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gaen-keyserver").path
        ownsWork = first == nil
        dataName = index == 0 ? "data" : "data\(index)"
        work = first?.work ?? FileManager.default.temporaryDirectory.appendingPathComponent("gaen-bench-keyserver-\(getpid())").path
        let codeKey = work + "/code-hmac.key"
        if first == nil {
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            for name in ["verification", "export"] {
                try KeyServerBench.runTool(path, ["make-key", "--out", "\(work)/\(name).pem"])
            }
            try Data("{}".utf8).write(to: URL(fileURLWithPath: work + "/configuration.json"))
            // With --database the server needs its codes' HMAC key given (replicas share one).
            try Data((Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString() + "\n").utf8).write(to: URL(fileURLWithPath: codeKey))
        }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments =
            [
                "serve", "--port", "0", "--data-dir", data, "--verification-key", work + "/verification.pem", "--export-key", work + "/export.pem",
                "--region", "XB", "--health-authority", "bench", "--device-api-key", Self.deviceKey, "--admin-api-key", Self.adminKey,
                "--export-interval", "0", "--exposure-configuration", work + "/configuration.json", "--code-hmac-key-file", codeKey,
                // The benches export the keys they published a moment before: the 2-hour embargo
                // every key now waits out (issue 53) is lifted, as in the demo.
                "--release-same-day-keys",
            ] + arguments + storage
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).split(separator: "\n").first,
            line.hasPrefix("listening on "), let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            stop()
            throw ValidationError("\(path) did not start listening")
        }
        self.port = port
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        if ownsWork { try? FileManager.default.removeItem(atPath: work) }
    }

    /// The server's peak resident memory so far, in bytes (VmHWM of /proc/PID/status).
    var peakResidentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kiB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kiB * 1024
    }
}
