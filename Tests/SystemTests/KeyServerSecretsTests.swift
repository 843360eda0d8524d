// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Testing

/// gaen-keyserver's secrets stay its own: API keys from a file or a systemd credential (never the
/// command line other users can read), and a data directory and databases of its user alone.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerSecretsTests {
    @Test func apiKeysComeFromFilesAndCredentialsAndTheDataIsPrivate() async throws {
        let files = try TemporaryDirectory()
        for name in ["verification", "export"] {
            _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
        }
        let deviceKeyFile = files.path + "/device-key"
        try "s3cret-device-key\n".write(toFile: deviceKeyFile, atomically: true, encoding: .utf8)
        let credentials = files.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try "s3cret-admin-key".write(toFile: credentials + "/admin-api-key", atomically: true, encoding: .utf8)
        let data = files.path + "/server"
        let output = files.path + "/server.out"
        // Started under a permissive umask, as from a shell.
        let (process, port) = try ShareLoopTests.startServer(
            [
                "--data-dir", data, "--verification-key", files.path + "/verification.pem", "--export-key", files.path + "/export.pem",
                "--health-authority", "ch.example", "--device-api-key-file", deviceKeyFile, "--export-interval", "0",
            ], output: output, environment: ["CREDENTIALS_DIRECTORY": credentials], umask: "022")
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(port > 0)
        let base = "http://127.0.0.1:\(port)"
        let transport = CurlTransport()
        func post(_ path: String, key: String, _ body: String) async throws -> Int {
            try await transport.send(
                HTTPRequest(
                    method: "POST", url: base + path, headers: [("X-API-Key", key), ("Content-Type", "application/json")], body: Array(body.utf8),
                    maximumResponseBytes: 4096)
            ).status
        }
        // The administrator's key came from the credential, the device's from its file.
        #expect(try await post("/admin/codes", key: "s3cret-admin-key", #"{"testType":"confirmed"}"#) == 200)
        #expect(try await post("/admin/codes", key: "s3cret-admin-kez", #"{"testType":"confirmed"}"#) == 401)
        #expect(try await post("/api/verify", key: "s3cret-device-key", #"{"code":"00000000"}"#) != 401)
        #expect(try await post("/api/verify", key: "s3cret-device", #"{"code":"00000000"}"#) == 401)
        // No key in what every local user can read.
        let commandLine = try String(contentsOfFile: "/proc/\(process.processIdentifier)/cmdline", encoding: .utf8)
        #expect(!commandLine.contains("s3cret"))
        // The data directory and its databases are the server's alone, whatever the umask.
        #expect(try FileManager.default.attributesOfItem(atPath: data)[.posixPermissions] as? Int == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: data) where name.hasSuffix(".sqlite") {
            #expect(try FileManager.default.attributesOfItem(atPath: data + "/" + name)[.posixPermissions] as? Int == 0o600, "\(name)")
        }
    }
}
