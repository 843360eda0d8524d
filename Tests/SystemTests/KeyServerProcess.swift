// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Testing

/// A `gaen-keyserver serve` on loopback with fresh verification and export keys, health authority
/// `ch.example`, device key `device-key`, administrator key `admin-key` and no export timer, for
/// the tests that meet it over HTTP as a phone does. Killed when released.
final class KeyServerProcess {
    let files: TemporaryDirectory
    let process: Process
    let port: Int
    let transport = CurlTransport()

    var base: String { "http://127.0.0.1:\(port)" }
    /// Its data directory (the SQLite files and the exports).
    var data: String { files.path + "/server" }
    var exportKey: String { files.path + "/export.pem" }

    init() throws {
        files = try TemporaryDirectory()
        for name in ["verification", "export"] {
            _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
        }
        (process, port) = try ShareLoopTests.startServer(
            [
                "--data-dir", files.path + "/server", "--verification-key", files.path + "/verification.pem", "--export-key", files.path + "/export.pem",
                "--health-authority", "ch.example", "--device-api-key", "device-key", "--admin-api-key", "admin-key", "--export-interval", "0",
            ], output: files.path + "/server.out")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// A certificate for `keys` as a phone gets one: an administrator's code for a confirmed test,
    /// verified for a token, and the keys' HMAC under `secret` certified.
    func certificate(for keys: [DiagnosisKey], secret: [UInt8]) async throws -> String {
        let issued = try await transport.send(
            HTTPRequest(
                method: "POST", url: base + "/admin/codes", headers: [("X-API-Key", "admin-key")], body: Array(#"{"testType":"confirmed"}"#.utf8),
                maximumResponseBytes: 4096))
        let code = try #require((try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])?["code"] as? String)
        let verification = VerificationClient(
            verifyURL: base + "/api/verify", certificateURL: base + "/api/certificate", apiKey: "device-key", transport: transport)
        let token = try await verification.verify(code: code).token
        return try await verification.certificate(token: token, keysHMAC: TEKHMAC.compute(keys, secret: secret))
    }
}
