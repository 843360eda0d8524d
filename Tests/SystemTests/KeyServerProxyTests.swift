// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// gaen-keyserver behind a reverse proxy, on the release binary over loopback with its shipped
/// limits: 127.0.0.2 is the trusted proxy (`--trusted-proxy 127.0.0.2`), and testbed/keyserver_proxy.py
/// makes the requests from chosen source addresses, as the proxy and as clients without one.
/// Both engines: SQLite files, and a PostgreSQL database.
@Suite(.ownThreads, .postgreSQLServer, .timeLimit(.minutes(3)))
struct KeyServerProxyTests {
    enum Engine: String, CaseIterable { case sqlite, postgresql }

    @Test(arguments: Engine.allCases)
    func forwardedClientsHaveBudgetsOfTheirOwnAndTheAdministratorIsNeverLockedOut(_ engine: Engine) throws {
        guard engine == .sqlite || PostgreSQLServer.binaries != nil else { return }
        let files = try TemporaryDirectory()
        for name in ["verification", "export"] {
            _ = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
        }
        var arguments = [
            "--data-dir", files.path + "/server", "--verification-key", files.path + "/verification.pem", "--export-key", files.path + "/export.pem",
            "--health-authority", "ch.example", "--device-api-key", "device-key", "--admin-api-key", "admin-key", "--export-interval", "0",
            "--trusted-proxy", "127.0.0.2",
        ]
        if engine == .postgresql {
            let keyFile = files.path + "/code-hmac.key"
            try (Data((0..<32).map { UInt8($0) }).base64EncodedString() + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
            arguments += ["--database", try PostgreSQLServer.required().makeDatabase(), "--code-hmac-key-file", keyFile]
        }
        let log = files.path + "/server.err"
        let (process, port) = try ShareLoopTests.startServer(arguments, output: files.path + "/server.out", errors: log)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        let script = BumbleFixture.root.appendingPathComponent("testbed/keyserver_proxy.py").path
        // Under a sanitizer, beside every other suite on 2 cores, 100 guesses say the same as 1,000.
        let guesses = BuildUnderTest.isSanitized ? 100 : 1000
        let run = try ToolRunner.runProgram("/usr/bin/python3", [script, String(port), "device-key", "admin-key", String(guesses)], limit: 120)
        #expect(run.status == 0, "\(run.standardError)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")

        // 1,000 wrong codes from one client behind the proxy: its budget of 30, then 429.
        #expect(result["proxied_guesses"] as? [String: Int] == ["400": 30, "429": guesses - 30])
        // The administrator issues codes through the proxy, even from the guesser's own address.
        #expect(result["admin_as_guesser"] as? Int == 200)
        #expect(result["admin_through_proxy"] as? Int == 200)
        // The guesser cannot verify even the right code; another client behind the proxy can.
        #expect(result["guesser_with_right_code"] as? Int == 429)
        #expect(result["other_client_verifies"] as? Int == 200)
        #expect(result["forwarded_rfc7239"] as? Int == 400, "Forwarded: for= names a client with a budget of its own")
        // Forged X-Forwarded-For from an address that is not a proxy: every guess is that address's.
        #expect(result["forged_guesses"] as? [String: Int] == ["400": 30, "429": 10])
        // 300 wrong codes from 127.0.0.1 leave its administrator issuing codes.
        #expect(result["direct_guesses"] as? [String: Int] == ["400": 30, "429": 270])
        #expect(result["admin_after_direct_guesses"] as? Int == 200)
        // A proxy's garbage is a 400 naming the header, and the server goes on.
        let malformed = result["malformed"] as? [Any]
        #expect(malformed?.first as? Int == 400)
        #expect(malformed?.last as? String == "X-Forwarded-For: 'not-an-address' is not an IP address")
        #expect(result["after_malformed"] as? Int == 200)

        // The access log names the client the proxy forwarded, not the proxy.
        let access = try String(contentsOfFile: log, encoding: .utf8)
        #expect(access.contains(#"198.51.100.10 "POST /api/verify" 429"#))
        #expect(access.contains(#"198.51.100.11 "POST /api/verify" 200"#))
        #expect(access.contains(#"2001:db8::7 "POST /api/verify" 400"#))
        #expect(access.contains(#"127.0.0.3 "POST /api/verify" 429"#))
        #expect(!access.contains("198.51.100.20"), "a forged header is not believed")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
