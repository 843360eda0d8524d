// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import PostgreSQL
import Testing

/// gaen-keyserver as a region runs it: three release replicas on one private PostgreSQL database
/// behind HAProxy from Debian (`HAProxyBalancer`), each exporting on a one-second timer. Codes,
/// publishes, budgets of failed attempts and exports are shared through the database alone.
@Suite(
    .ownThreads, .postgreSQLServer,
    .enabled(if: PostgreSQLServer.binaries != nil, Comment(rawValue: PostgreSQLServer.unavailable)),
    .enabled(if: HAProxyBalancer.binary != nil, Comment(rawValue: HAProxyBalancer.unavailable)), .timeLimit(.minutes(5)))
struct KeyServerReplicaTests {
    /// The region: keys shared by every replica, the database, the replicas and the balancer.
    final class Region {
        let files: TemporaryDirectory
        let url: String
        var replicas: [(process: Process, port: Int)] = []
        var balancer: HAProxyBalancer!
        let transport = CurlTransport()

        init() throws {
            files = try TemporaryDirectory()
            for name in ["verification", "export"] {
                let made = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
                try made.standardOutput.write(toFile: "\(files.path)/\(name).pub.pem", atomically: true, encoding: .utf8)
            }
            // Replicas must store and find codes under one HMAC key.
            try (Data((0..<32).map { UInt8($0 ^ 0x5A) }).base64EncodedString() + "\n").write(
                toFile: files.path + "/code-hmac.key", atomically: true, encoding: .utf8)
            url = try PostgreSQLServer.required().makeDatabase()
            for index in 0..<3 {
                // No --data-dir: the database holds everything, exports included.
                replicas.append(
                    try ShareLoopTests.startServer(
                        [
                            "--database", url, "--code-hmac-key-file", files.path + "/code-hmac.key", "--verification-key", files.path + "/verification.pem",
                            "--export-key", files.path + "/export.pem", "--key-id", "310:v1", "--region", "CH", "--health-authority", "ch.example",
                            "--device-api-key", "device-key", "--admin-api-key", "admin-key", "--export-interval", "1", "--release-same-day-keys",
                            "--trusted-proxy", "127.0.0.2",
                        ], output: output(index), environment: ["PGAPPNAME": "gaen-replica-\(index)"], errors: errors(index)))
            }
            balancer = try HAProxyBalancer(replicas: replicas.map(\.port), directory: files.path)
        }

        deinit {
            for replica in replicas where replica.process.isRunning { kill(replica.process.processIdentifier, SIGKILL) }
        }

        func output(_ index: Int) -> String { files.path + "/replica\(index).out" }
        func errors(_ index: Int) -> String { files.path + "/replica\(index).err" }
        func base(_ index: Int) -> String { "http://127.0.0.1:\(replicas[index].port)" }
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        func send(_ url: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil) async throws -> HTTPResponse {
            try await transport.send(
                HTTPRequest(
                    method: method, url: url, headers: headers + (method == "POST" ? [("Content-Type", "application/json")] : []),
                    body: Array((body ?? "").utf8), maximumResponseBytes: 16 << 20))
        }

        func issueCode(at base: String) async throws -> String {
            let issued = try await send(base + "/admin/codes", method: "POST", headers: [("X-API-Key", "admin-key")], body: #"{"testType":"confirmed"}"#)
            #expect(issued.status == 200)
            return try #require((try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])?["code"] as? String)
        }

        /// Fresh keys of the days before today, published by a phone whose code replica `first` issued, the
        /// next one verified, the one after certified, and `first` again stored.
        func publish(startingAt first: Int, keys given: [DiagnosisKey]? = nil) async throws -> (keys: [DiagnosisKey], result: PublishClient.Result) {
            let code = try await issueCode(at: base(first))
            let verification = VerificationClient(
                verifyURL: base((first + 1) % 3) + "/api/verify", certificateURL: base((first + 2) % 3) + "/api/certificate", apiKey: "device-key",
                transport: transport)
            let token = try await verification.verify(code: code).token
            let today = UTCDay(containing: UnixTime(seconds: Int64(Date().timeIntervalSince1970)))
            // A key a day, yesterday and before: a file may not hold more than 3 of one start.
            let keys =
                try given
                ?? (0..<5).map { day in
                    DiagnosisKey(
                        key: try TemporaryExposureKey(
                            keyData: try SystemRandom().bytes16(), rollingStartIntervalNumber: try #require(today.advanced(by: Int64(-1 - day)).firstInterval)),
                        transmissionRiskLevel: 0, reportType: .confirmedTest)
                }
            let secret = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let certificate = try await verification.certificate(token: token, keysHMAC: TEKHMAC.compute(keys, secret: secret))
            let result = try await PublishClient(publishURL: base(first) + "/v1/publish", healthAuthorityID: "ch.example", transport: transport).publish(
                keys: keys, certificate: certificate, hmacSecret: secret)
            return (keys, result)
        }

        /// The index as the balancer serves it, a name a line.
        func index() async throws -> [String] {
            let response = try await send(balancer.base + "/exports/exposureKeyExport-CH/index.txt")
            #expect(response.status == 200)
            return String(decoding: response.body, as: UTF8.self).split(separator: "\n").map(String.init)
        }

        /// Every key of every listed file, counted, each file fetched from each live replica and
        /// required to be the same bytes everywhere.
        func exportedKeys(live: [Int]) async throws -> [[UInt8]: Int] {
            let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: read(files.path + "/export.pub.pem"))])
            var counted = [[UInt8]: Int]()
            for name in try await index() {
                var copies = [[UInt8]]()
                for replica in live { copies.append(try await send(base(replica) + "/exports/" + name).body) }
                #expect(Set(copies).count == 1, "\(name) differs between replicas")
                for key in try KeyFile(zip: copies[0], policy: policy).export.keys { counted[key.key.keyData.bytes, default: 0] += 1 }
            }
            return counted
        }
    }

    /// Issue 47, through the balancer as docs/keyserver.md configures it: one address opening 1,000
    /// silent sockets keeps at most 32 of them (the rest are rejected at once), and another
    /// address is served meanwhile.
    @Test func oneAddressHoldingSocketsLeavesTheBalancerToOthers() async throws {
        let region = try Region()
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let held = try (0..<1000).map { _ in try KeyServerNetworkBoundsTests.Client(port: region.balancer.port, source: "127.0.0.21") }
        let honest = try KeyServerNetworkBoundsTests.Client(port: region.balancer.port, source: "127.0.0.22")
        honest.send("GET /configuration.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        // A replica's own answer (this region serves no configuration), not the balancer's 503.
        let answer = honest.readToEnd().text
        #expect(answer.hasPrefix("HTTP/1.1 404 ") && answer.contains("no exposure configuration is configured"), "\(answer)")
        // The rejected ones are closed at once; those kept wait for their head.
        var open = 0
        for client in held {
            var probe = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
            if poll(&probe, 1, 0) == 0 { open += 1 }
        }
        #expect(open <= 32, "\(open) of 1,000 still open")
    }

    @Test func threeReplicasBehindHAProxyShareCodesPublishesBudgetsAndExports() async throws {
        let region = try Region()
        let database = try PostgreSQLConnection(region.url)

        // A code issued on one replica is verified on another and certified on the third; a
        // publish on each replica lands once, and the same keys again add none.
        var published = Set<[UInt8]>()
        for first in 0..<3 {
            let (keys, result) = try await region.publish(startingAt: first)
            #expect(result.insertedExposures == 5)
            published.formUnion(keys.map(\.key.keyData.bytes))
        }
        #expect(try database.query("SELECT count(*) FROM exposure", []) == [[.integer(15)]])
        let (again, _) = try await region.publish(startingAt: 0)
        #expect(try database.query("SELECT count(*) FROM exposure", []) == [[.integer(20)]])
        // The same keys again through another replica, without the revision token: refused.
        await #expect {
            try await region.publish(startingAt: 2, keys: again)
        } throws: { error in
            "\(error)".contains("revision")
        }
        #expect(try database.query("SELECT count(*) FROM exposure", []) == [[.integer(20)]])
        published.formUnion(again.map(\.key.keyData.bytes))

        // gaend shares its own key through the balancer (each request may meet another replica).
        let harness = try ManagerHarness([
            "--radio", "none", "--enable", "true", "--test-mode", "true", "--verification-url", region.balancer.base, "--verification-api-key",
            "device-key", "--publish-url", region.balancer.base + "/v1/publish", "--health-authority-id", "ch.example", "--index-url",
            region.balancer.base + "/exports/exposureKeyExport-CH/index.txt", "--export-key", "310:v1:\(region.files.path)/export.pub.pem",
        ])
        defer { harness.stop() }
        #expect(try harness.ctl(["keys", "--test"]).status == 0)
        let today = String(Output.time(UInt64(Date().timeIntervalSince1970)).prefix(10))
        let id = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed"]).standardOutput.trimmingCharacters(in: .newlines)
        let shared = try harness.ctl(["share", "--test-result", id, "--code", try await region.issueCode(at: region.balancer.base)])
        #expect(shared.status == 0, "\(shared.standardError)")
        let stored = try #require(try database.query("SELECT count(*) FROM exposure", []).first?.first?.integer)
        #expect(stored > 20)

        // The replicas' timers export everything, each key once; every replica serves every file
        // with the same bytes, whichever wrote it.
        try await eventually("every stored key exported", within: .seconds(60)) {
            try database.query("SELECT count(*) FROM exposure WHERE exported_batch IS NULL", []) == [[.integer(0)]]
        }
        var exported = try await region.exportedKeys(live: [0, 1, 2])
        #expect(exported.count == Int(stored) && exported.values.allSatisfy { $0 == 1 })
        #expect(published.isSubset(of: Set(exported.keys)))
        let writers = (0..<3).filter { region.read(region.output($0)).contains("exported ") }
        #expect(!writers.isEmpty)

        // A conditional GET through the balancer, repeated so that each replica answers one: 304.
        let name = try #require(try await region.index().first)
        let first = try await region.send(region.balancer.base + "/exports/" + name)
        let tag = try #require(first.headers["etag"])
        #expect(first.headers["cache-control"] == "public, max-age=31536000, immutable")
        for _ in 0..<3 {
            let again = try await region.send(region.balancer.base + "/exports/" + name, headers: [("If-None-Match", tag)])
            #expect(again.status == 304 && again.body.isEmpty)
        }
        let head = try await region.send(region.balancer.base + "/exports/" + name, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(first.body.count))

        // gaend downloads through the balancer what the three made, and verifies every file.
        let detectRun = try harness.ctl(["detect", "--json"])
        #expect(detectRun.status == 0, "\(detectRun.standardOutput)\(detectRun.standardError)")
        let detected = try JSONSerialization.jsonObject(with: Data(detectRun.standardOutput.utf8)) as? [String: Any]
        let files = detected?["files"] as? [[String: Any]] ?? []
        #expect(files.count == (try await region.index()).count && files.allSatisfy { $0["verdict"] as? String == "verified" })
        #expect((detected?["statistics"] as? [String: Any])?["keys"] as? Int == Int(stored))

        // A replica killed in the middle of its export. The test holds the export lock while new
        // keys are published, then locks their rows and lets go of the export lock: the replica
        // that takes it signs its file and records the batch, and then waits on the rows.
        let holder = try PostgreSQLConnection(region.url)
        try holder.execute("BEGIN")
        _ = try holder.query("SELECT 1 FROM pg_advisory_xact_lock($1)", [.integer(0x6761_656E_0000_0002)])
        let (late, _) = try await region.publish(startingAt: 1)
        let rows = try PostgreSQLConnection(region.url)
        try rows.execute("BEGIN")
        _ = try rows.query("SELECT key FROM exposure WHERE exported_batch IS NULL FOR UPDATE")
        try holder.execute("COMMIT")
        var victim: Int?
        try await eventually("a replica waiting on the rows in its export") {
            let waiting = try database.query(
                "SELECT application_name FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE exposure SET exported_batch%'")
            victim = waiting.first?.first?.text.flatMap { Int($0.dropFirst("gaen-replica-".count)) }
            return victim != nil
        }
        let killed = try #require(victim)
        let listedBefore = try await region.index()
        kill(region.replicas[killed].process.processIdentifier, SIGKILL)
        region.replicas[killed].process.waitUntilExit()
        try rows.execute("ROLLBACK")
        let live = (0..<3).filter { $0 != killed }
        // Its batch never committed: the index lists what it listed, every file is served, and the
        // next export by another replica takes the late keys, each once.
        #expect(try await region.index() == listedBefore)
        try await eventually("the late keys exported by another replica", within: .seconds(60)) {
            try database.query("SELECT count(*) FROM exposure WHERE exported_batch IS NULL", []) == [[.integer(0)]]
        }
        exported = try await region.exportedKeys(live: live)
        #expect(exported.values.allSatisfy { $0 == 1 })
        #expect(Set(late.map(\.key.keyData.bytes)).isSubset(of: Set(exported.keys)))
        #expect(exported.count == Int(stored) + late.count)

        // 1,000 wrong codes from one client through the balancer: 30 answered as wrong, then 429,
        // whichever replica answers; the administrator at that address is never refused.
        let guesses = BuildUnderTest.isSanitized ? 100 : 1000
        var statuses = [Int: Int]()
        for guess in 0..<guesses {
            let response = try await region.send(
                region.balancer.base + "/api/verify", method: "POST", headers: [("X-API-Key", "device-key")],
                body: #"{"code":"\#(String(format: "%08d", guess))"}"#)
            statuses[response.status, default: 0] += 1
            if guess % 100 == 0 { #expect(try await region.issueCode(at: region.balancer.base).count > 0) }
        }
        #expect(statuses == [400: 30, 429: guesses - 30])
        let lookedUp = live.map { replica in
            region.read(region.errors(replica)).split(separator: "\n").filter { $0.contains(#""POST /api/verify" 400"#) }.count
        }
        #expect(lookedUp.allSatisfy { $0 > 0 }, "a replica looked up none of the guesses: \(lookedUp)")
        print(
            "replicas: first exports by \(writers), replica \(killed) killed mid-export, \(exported.count) keys in \(try await region.index().count) files; "
                + "\(guesses) guesses through HAProxy: \(statuses), wrong ones looked up per live replica \(lookedUp)")
    }
}
