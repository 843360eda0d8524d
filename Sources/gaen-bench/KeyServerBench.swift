// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import Foundation
import Glibc
import KeyFiles
import PostgreSQL
import Synchronization

/// Load on `gaen-keyserver serve`, run as a second process on loopback: publish requests (each with
/// its own code, token and certificate, obtained before the clock starts) and downloads of
/// `index.txt` and of one export holding every key the publishes stored. Counts and a time limit
/// bound every phase; the client opens one connection per request, as phones do.
struct KeyServerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyserver", abstract: "Key server: publish requests/s and p99, index.txt and export downloads/s, over loopback.")

    @Option(help: "The gaen-keyserver executable (default: the one beside gaen-bench).")
    var server: String?

    @Option(help: "Publish requests (30 keys each: 3,334 store 100,020 keys).")
    var publishes = 3334

    @Option(help: "Requests in flight at once.")
    var concurrency = 16

    @Option(help: "Downloads of index.txt.")
    var indexDownloads = 2000

    @Option(help: "Downloads of the export file.")
    var exportDownloads = 40

    @Option(help: "The server's storage: a postgresql:// URL (default: SQLite files in its data directory).")
    var database: String?

    @Option(help: "Seconds any one phase may take before it stops where it is.")
    var timeLimit = 120

    @Option(help: "Replicas of the server on --database, behind --balancer (one: the server alone, no balancer).")
    var replicas = 1

    @Option(help: "HAProxy, put in front of the replicas (needed with --replicas above 1).")
    var balancer: String?

    @Option(help: "Wrong codes sent to /api/verify (each looked up: the failure budget is lifted).")
    var guesses = 2000

    static let deviceKey = BenchKeyServer.deviceKey
    static let adminKey = BenchKeyServer.adminKey
    static let keysPerPublish = 30

    func validate() throws {
        guard replicas >= 1, replicas <= 16 else { throw ValidationError("--replicas: 1 to 16, not \(replicas)") }
        if replicas > 1 {
            guard database != nil else { throw ValidationError("--replicas: replicas share a PostgreSQL database: give --database") }
            guard balancer != nil else { throw ValidationError("--replicas: replicas need a --balancer (HAProxy) in front") }
        }
    }

    func run() async throws {
        let storage = database.map { ["--database", $0] } ?? []
        // One client makes every request here: the throughput, not the per-client budgets, is
        // measured. Replicas trust the balancer's X-Forwarded-For, as a region's would.
        let arguments = ["--requests-per-minute", "1000000", "--failed-attempts-per-hour", "1000000", "--trusted-proxy", "127.0.0.2"]
        let server = try BenchKeyServer(server: self.server, storage: storage, arguments: arguments)
        var servers = [server]
        var front: BenchBalancer?
        defer {
            front?.stop()
            for replica in servers.reversed() { replica.stop() }
        }
        for index in 1..<replicas {
            servers.append(try BenchKeyServer(server: self.server, storage: storage, arguments: arguments, replicaOf: server, index: index))
        }
        if let balancer, replicas > 1 { front = try BenchBalancer(haproxy: balancer, replicas: servers.map(\.port), work: server.work) }
        let (serverPath, work, data) = (server.path, server.work, server.data)
        let pids = servers.map(\.pid)
        let base = front?.base ?? server.base
        let limit = Duration.seconds(timeLimit)
        print(
            "gaen-keyserver: \(replicas == 1 ? "one (pid \(server.pid))" : "\(replicas) replicas (pids \(pids)) behind HAProxy") on \(base), "
                + "\(database == nil ? "SQLite" : "PostgreSQL") storage; client: \(concurrency) requests in flight, a new connection each")

        // Codes, tokens and certificates: the verification flow, measured on the way.
        let transport = CurlTransport()
        let prepared = try await Self.timed(
            "verification (code, verify, certificate)", count: publishes, concurrency: concurrency, limit: limit, servers: pids
        ) {
            _ in try await Self.prepareUpload(base: base, transport: transport)
        }
        // The publishes themselves.
        let uploads = Mutex(prepared.values)
        let published = try await Self.timed(
            "publish (30 keys each)", count: prepared.values.count, concurrency: concurrency, limit: limit, servers: pids
        ) { _ in
            guard let upload = uploads.withLock({ $0.popLast() }) else { return 0 }
            let client = PublishClient(publishURL: base + "/v1/publish", healthAuthorityID: "bench", transport: transport)
            let result = try await client.publish(keys: upload.keys, certificate: upload.certificate, hmacSecret: upload.secret)
            return result.insertedExposures
        }
        let stored = published.values.reduce(0, +)

        // One export of everything stored.
        let exportClock = ContinuousClock.now
        let exported = try Self.runTool(
            serverPath, ["export", "--data-dir", data, "--export-key", work + "/export.pem", "--region", "XB", "--directory", data + "/exports"] + storage)
        let exportSeconds = Figures.seconds(ContinuousClock.now - exportClock)
        let names = Self.writtenFiles(exported)
        guard let name = names.first else { throw ValidationError("the export wrote nothing: \(exported)") }
        let size = names.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: "\(data)/exports/\($1)")[.size] as? Int) ?? 0) }
        print(
            "export of \(Figures.grouped(Double(stored))) keys: \(names.joined(separator: ", ")), \(Figures.decimals(Double(size) / 1_048_576, 2)) MiB, "
                + "written in \(Figures.decimals(exportSeconds, 1)) s (gaen-keyserver export, a third process)")

        _ = try await Self.timed("download index.txt", count: indexDownloads, concurrency: concurrency, limit: limit, servers: pids) { _ in
            try await Self.download("\(base)/exports/exposureKeyExport-XB/index.txt", transport: transport)
        }
        let big = try await Self.timed(
            "download the \(Figures.grouped(Double(stored)))-key export", count: exportDownloads, concurrency: min(concurrency, 4), limit: limit,
            servers: pids
        ) { _ in
            try await Self.download("\(base)/exports/\(name)", transport: transport)
        }
        let seconds = big.seconds
        print("  \(Figures.decimals(Double(big.values.reduce(0, +)) / 1_048_576 / seconds, 1)) MiB/s")

        // Wrong codes: what a guess costs the servers and the database. Each takes a transaction
        // id only if it writes (PostgreSQL assigns none to a read): the budget's upsert.
        let firstID = try database.map(Self.transactionID)
        let guessed = try await Self.timed("wrong codes to /api/verify", count: guesses, concurrency: concurrency, limit: limit, servers: pids) { index in
            let response = try await transport.send(
                HTTPRequest(
                    method: "POST", url: base + "/api/verify", headers: [("X-API-Key", Self.deviceKey), ("Content-Type", "application/json")],
                    body: Array(#"{"code":"\#(String(format: "%08d", index))"}"#.utf8), maximumResponseBytes: 4096))
            guard response.status == 400 else { throw ValidationError("a wrong code was answered \(response.status)") }
            return 1
        }
        if let database, let firstID, !guessed.values.isEmpty {
            // Each call of txid_current takes an id of its own: the first's is not counted, the last's is.
            let writes = Double(try Self.transactionID(database) - firstID - 1) / Double(guessed.values.count)
            print("  database: \(Figures.decimals(writes, 2)) write transactions per wrong code")
        }
    }

    /// A new transaction id of the database at `url` (`txid_current()` on a connection of our own).
    static func transactionID(_ url: String) throws -> Int64 {
        guard let id = try PostgreSQLConnection(url).query("SELECT txid_current()").first?.first?.integer else {
            throw ValidationError("txid_current() returned nothing")
        }
        return id
    }

    struct Upload: Sendable {
        var keys: [DiagnosisKey]
        var certificate: String
        var secret: [UInt8]
    }

    /// A code from the admin endpoint, verified, and a certificate for 30 fresh keys: three days'
    /// worth of starts at most three keys each, yesterday and before (so nothing is embargoed).
    static func prepareUpload(base: String, transport: some HTTPTransport) async throws -> Upload {
        let issued = try await transport.send(
            HTTPRequest(
                method: "POST", url: base + "/admin/codes", headers: [("X-API-Key", adminKey), ("Content-Type", "application/json")],
                body: Array(#"{"testType":"confirmed"}"#.utf8), maximumResponseBytes: 4096))
        guard issued.status == 200, let object = try? JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any],
            let code = object["code"] as? String
        else { throw ValidationError("/admin/codes answered \(issued.status)") }
        let verification = VerificationClient(
            verifyURL: base + "/api/verify", certificateURL: base + "/api/certificate", apiKey: deviceKey, transport: transport)
        let verified = try await verification.verify(code: code)
        let today = UTCDay(containing: UnixTime(seconds: Int64(Date().timeIntervalSince1970)))
        var generator = SystemRandomNumberGenerator()
        let keys = try (0..<keysPerPublish).map { index in
            guard let start = today.advanced(by: Int64(-1 - index / 3)).firstInterval,
                let bytes = Bytes16((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
            else { throw ValidationError("no interval for day \(today)") }
            return DiagnosisKey(
                key: try TemporaryExposureKey(keyData: bytes, rollingStartIntervalNumber: start), transmissionRiskLevel: 0, reportType: .confirmedTest)
        }
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let certificate = try await verification.certificate(token: verified.token, keysHMAC: TEKHMAC.compute(keys, secret: secret))
        return Upload(keys: keys, certificate: certificate, secret: secret)
    }

    static func download(_ url: String, transport: CurlTransport) async throws -> Int {
        let response = try await transport.send(HTTPRequest(url: url, maximumResponseBytes: 64 << 20))
        guard response.status == 200 else { throw ValidationError("\(url): HTTP \(response.status)") }
        return response.body.count
    }

    struct Timed<Value: Sendable>: Sendable {
        var values: [Value]
        var seconds: Double
    }

    /// Runs `body` `count` times with `concurrency` in flight, or until `limit` passes; prints the
    /// rate and the latency percentiles.
    static func timed<Value: Sendable>(
        _ label: String, count: Int, concurrency: Int, limit: Duration, servers: [Int32], _ body: @escaping @Sendable (Int) async throws -> Value
    ) async throws -> Timed<Value> {
        let cpuBefore = cpuSeconds(servers)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + limit
        let next = Tickets()
        let results = try await withThrowingTaskGroup(of: [(Value, Duration)].self) { group in
            for _ in 0..<max(1, concurrency) {
                group.addTask {
                    var mine = [(Value, Duration)]()
                    while clock.now < deadline {
                        let index = next.take()
                        guard index < count else { break }
                        let began = clock.now
                        let value = try await body(index)
                        mine.append((value, clock.now - began))
                    }
                    return mine
                }
            }
            var all = [(Value, Duration)]()
            for try await part in group { all += part }
            return all
        }
        let seconds = Figures.seconds(clock.now - start)
        let latencies = results.map { Figures.seconds($0.1) * 1000 }.sorted()
        func percentile(_ p: Double) -> String {
            latencies.isEmpty ? "-" : Figures.decimals(latencies[min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)], 1)
        }
        let stopped = results.count < count ? " (stopped at the \(Figures.seconds(limit)) s limit)" : ""
        print(
            "\(label): \(Figures.grouped(Double(results.count))) in \(Figures.decimals(seconds, 2)) s = "
                + "\(Figures.grouped(Double(results.count) / seconds))/s; latency p50 \(percentile(0.5)) ms, p99 \(percentile(0.99)) ms, "
                + "max \(percentile(1.0)) ms\(stopped)")
        if let before = cpuBefore, let after = cpuSeconds(servers), !results.isEmpty {
            print(
                "  server CPU: \(Figures.decimals((after - before) * 1000 / Double(results.count), 2)) ms per request "
                    + "(\(Figures.decimals((after - before) / seconds * 100, 0)) % of one core)")
        }
        return Timed(values: results.map(\.0), seconds: seconds)
    }

    /// User and system CPU seconds the servers have used together.
    static func cpuSeconds(_ pids: [Int32]) -> Double? {
        let each = pids.compactMap(cpuSeconds)
        return each.count == pids.count ? each.reduce(0, +) : nil
    }

    /// User and system CPU seconds `pid` has used (/proc/PID/stat fields 14 and 15).
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Request numbers handed out to the workers.
    final class Tickets: Sendable {
        private let counter = Atomic(0)
        func take() -> Int { counter.add(1, ordering: .relaxed).oldValue }
    }

    @discardableResult
    /// The files `gaen-keyserver export` says it wrote, a "wrote NAME" line each, in order.
    static func writtenFiles(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { $0.hasPrefix("wrote ") ? String($0.dropFirst(6)) : nil }
    }

    static func runTool(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("\(path) \(arguments.first ?? "") exited \(process.terminationStatus)") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
