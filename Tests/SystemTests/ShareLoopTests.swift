// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// The whole loop over HTTP: gaen-keyserver serving on loopback, a code issued by its admin
/// command, gaend sharing its keys through it (gaenctl share), the server exporting, and gaend
/// downloading and verifying the export (gaenctl detect).
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct ShareLoopTests {
    /// `gaen-keyserver serve` on a free port; returns it and the port once listening.
    /// `gaen-keyserver serve` on a free port; with `umask`, started through a shell that sets it.
    static func startServer(
        _ arguments: [String], output: String, environment: [String: String] = [:], umask: String? = nil, errors: String? = nil
    ) throws -> (Process, Int) {
        let process = Process()
        let server = try ToolRunner.productsDirectory().appendingPathComponent("gaen-keyserver")
        if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", #"umask \#(umask); exec "$0" "$@""#, server.path, "serve", "--port", "0"] + arguments
        } else {
            process.executableURL = server
            process.arguments = ["serve", "--port", "0"] + arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        if let errors {
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        var port = 0
        try eventually("the server to listen") {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) else { return !process.isRunning }
            port = Int(line.split(separator: ":").last ?? "") ?? 0
            return true
        }
        return (process, port)
    }

    @Test func keysSharedThroughTheServerComeBackInItsExport() async throws {
        let files = try TemporaryDirectory()
        for name in ["verification", "export"] {
            let made = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
            try made.standardOutput.write(toFile: "\(files.path)/\(name).pub.pem", atomically: true, encoding: .utf8)
        }
        let data = files.path + "/server"
        let (server, port) = try Self.startServer(
            [
                "--data-dir", data, "--verification-key", files.path + "/verification.pem", "--export-key", files.path + "/export.pem", "--key-id", "310:v1",
                "--region", "CH", "--health-authority", "ch.example", "--device-api-key", "device-key", "--export-interval", "0", "--release-same-day-keys",
            ], output: files.path + "/server.out")
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        #expect(port > 0)
        let base = "http://127.0.0.1:\(port)"
        let harness = try ManagerHarness([
            "--radio", "none", "--enable", "true", "--test-mode", "true", "--verification-url", base, "--verification-api-key", "device-key",
            "--publish-url", base + "/v1/publish", "--health-authority-id", "ch.example", "--index-url", base + "/exports/exposureKeyExport-CH/index.txt",
            // No export-base-url: the reference layout's lines include the root folder, and the daemon
            // resolves them against the folder above it by itself.
            "--export-key", "310:v1:\(files.path)/export.pub.pem",
        ])

        // A key to share (test mode makes the current one), a test result, a code.
        #expect(try harness.ctl(["keys", "--test"]).status == 0)
        let today = String(Output.time(UInt64(Date().timeIntervalSince1970)).prefix(10))
        let id = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed"]).standardOutput.trimmingCharacters(in: .newlines)
        let code = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--data-dir", data, "--verification-key", files.path + "/verification.pem", "--type", "confirmed"]
        ).standardOutput.trimmingCharacters(in: .newlines)
        let wrong = try harness.ctl(["share", "--test-result", id, "--code", "00000001"])
        #expect(wrong.status == 1)
        // An unknown code is answered as a used one is (the reference's verify API).
        #expect(wrong.standardError.contains("code_invalid"))
        let shared = try harness.ctl(["share", "--test-result", id, "--code", code])
        #expect(shared.status == 0, "\(shared.standardError)")
        // The code is spent.
        #expect(try harness.ctl(["share", "--test-result", id, "--code", code]).standardError.contains("code_invalid"))

        // The server exports; gaend downloads and verifies the file (its own key, no match here).
        let exported = try ToolRunner.run(
            "gaen-keyserver",
            [
                "export", "--data-dir", data, "--export-key", files.path + "/export.pem", "--key-id", "310:v1", "--region", "CH", "--directory",
                data + "/exports",
            ])
        #expect(exported.standardOutput.hasPrefix("wrote exposureKeyExport-CH/"), "\(exported.standardOutput)\(exported.standardError)")
        let detectRun = try harness.ctl(["detect", "--json"])
        #expect(detectRun.status == 0, "\(detectRun.standardOutput)\(detectRun.standardError)")
        let detected = try? JSONSerialization.jsonObject(with: Data(detectRun.standardOutput.utf8)) as? [String: Any]
        let downloaded = detected?["files"] as? [[String: Any]] ?? []
        #expect(downloaded.count == 1)
        #expect(downloaded.first?["verdict"] as? String == "verified")
        #expect((detected?["statistics"] as? [String: Any])?["keys"] as? Int ?? 0 >= 1)
        harness.stop()
        // The server's stdout holds its own lines only: no line per connection, which would fill a
        // pipe nobody reads and stop the server.
        let serverOutput = try String(contentsOfFile: files.path + "/server.out", encoding: .utf8)
        #expect(serverOutput.split(separator: "\n").allSatisfy { $0.hasPrefix("listening on ") || $0.hasPrefix("exported ") }, "\(serverOutput.prefix(300))")
    }

    /// Issue 53, item 10: a share in which the key server stored none of the keys (each dropped
    /// with a warning: symptoms 20 days before the key) is not reported as shared: gaenctl says so
    /// with the server's words, the result stays shareable, and the journal has each warning.
    @Test func aShareWhoseKeysWereAllDroppedIsNotShared() async throws {
        let files = try TemporaryDirectory()
        _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/verification.pem"])
        _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/export.pem"])
        let data = files.path + "/server"
        let (server, port) = try Self.startServer(
            [
                "--data-dir", data, "--verification-key", files.path + "/verification.pem", "--export-key", files.path + "/export.pem",
                "--region", "CH", "--health-authority", "ch.example", "--device-api-key", "device-key", "--export-interval", "0",
            ], output: files.path + "/server.out")
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let base = "http://127.0.0.1:\(port)"
        let harness = try ManagerHarness([
            "--radio", "none", "--enable", "true", "--test-mode", "true", "--verification-url", base, "--verification-api-key", "device-key",
            "--publish-url", base + "/v1/publish", "--health-authority-id", "ch.example",
        ])
        defer { harness.stop() }
        #expect(try harness.ctl(["keys", "--test"]).status == 0)
        let now = UInt64(Date().timeIntervalSince1970)
        let today = String(Output.time(now).prefix(10))
        let onset = String(Output.time(now - 20 * 86_400).prefix(10))
        let id = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed", "--symptom-onset", onset]).standardOutput
            .trimmingCharacters(in: .newlines)
        let code = try ToolRunner.run(
            "gaen-keyserver", ["issue-code", "--data-dir", data, "--verification-key", files.path + "/verification.pem", "--type", "confirmed"]
        ).standardOutput.trimmingCharacters(in: .newlines)
        let shared = try harness.ctl(["share", "--test-result", id, "--code", code])
        #expect(shared.status == 1, "\(shared.standardOutput)")
        #expect(shared.standardError.contains("stored none of the 1 keys, so nobody can be warned"), "\(shared.standardError)")
        #expect(shared.standardError.contains("days from symptom onset"), "\(shared.standardError)")
        let results = try harness.ctl(["test-result", "list"]).standardOutput
        #expect(!results.contains("shared"), "\(results)")
        try await eventually("the warning in the journal") { harness.stderr.contains("the key server dropped a key") }
    }
}
