// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import ENCrypto
import Foundation
import KeyFiles
import Synchronization

/// `gaen-bench keyserver-attack`: the attack suite of issue 17 against `gaen-keyserver serve` with
/// its shipped limits, each attacker from a loopback address of its own, while a normal client
/// (127.0.0.1) keeps reading the configuration and sharing keys. Prints each attack's statuses,
/// the normal client's latency during the attacks, the server's peak memory, and whether anything
/// the attacks sent was stored; exits 1 if any attack was not answered as it should be.
struct KeyServerAttackBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyserver-attack", abstract: "Key server under attack on loopback: statuses, a normal client's p99, peak RSS.")

    @Option(help: "The gaen-keyserver executable (default: the one beside gaen-bench).")
    var server: String?

    @Option(help: "Slow clients held open at once.")
    var slowClients = 200

    @Option(help: "Silent sockets one address opens at once (all but the per-client cap refused).")
    var heldSockets = 1000

    @Option(help: "Wrong codes sent by one client.")
    var wrongCodes = 1000

    @Option(help: "The server's --request-timeout (seconds): how long the slow clients are held.")
    var requestTimeout = 15.0

    @Option(help: "The server's --failed-attempts-per-hour.")
    var failedAttemptsPerHour = 30

    func run() async throws {
        let server = try BenchKeyServer(
            server: self.server, storage: [],
            arguments: ["--request-timeout", String(requestTimeout), "--failed-attempts-per-hour", String(failedAttemptsPerHour)])
        defer { server.stop() }
        let port = server.port
        let verificationKey = try ECDSAPrivateKey(pem: String(contentsOfFile: server.work + "/verification.pem", encoding: .utf8))
        print("gaen-keyserver (pid \(server.pid)) on \(server.base), shipped limits but --request-timeout \(requestTimeout) s")
        let idle = server.peakResidentBytes ?? 0

        let normal = NormalClient(port: port)
        let running = Task { await normal.run() }
        let api = APIAttacks(port: port, verificationKey: verificationKey)
        let (slowClients, wrongCodes, failureBudget, requestTimeout, heldSockets) = (
            slowClients, wrongCodes, failedAttemptsPerHour, requestTimeout, heldSockets
        )
        let clock = ContinuousClock()
        let started = clock.now
        async let slow = onThread { RawAttacks.slowClients(port: port, count: slowClients, requestTimeout: requestTimeout) }
        async let declared = onThread { RawAttacks.hugeBody(port: port, chunked: false) }
        async let chunked = onThread { RawAttacks.hugeBody(port: port, chunked: true) }
        async let head = onThread { RawAttacks.hugeHead(port: port) }
        async let smuggled = onThread { RawAttacks.smuggled(port: port) }
        async let paths = onThread { RawAttacks.paths(port: port) }
        async let held = onThread { RawAttacks.heldSockets(port: port, count: heldSockets) }
        async let guesses = onThread { api.wrongCodes(count: wrongCodes, failureBudget: failureBudget) }
        let forged = try await api.certificates()
        let outcomes = await [declared, chunked, head, smuggled, paths, guesses] + forged + [slow, held]
        let attackSeconds = Figures.seconds(clock.now - started)
        normal.stop()
        await running.value

        for outcome in outcomes { print(outcome.line) }
        print("attacks took \(Figures.decimals(attackSeconds, 1)) s")
        let latencies = normal.latencies.sorted()
        func percentile(_ p: Double) -> String {
            latencies.isEmpty ? "-" : Figures.decimals(latencies[min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)], 1)
        }
        print(
            "normal client during the attacks: \(latencies.count) requests, \(normal.failures) failed, \(normal.shares) shares of 30 keys; "
                + "latency p50 \(percentile(0.5)) ms, p99 \(percentile(0.99)) ms, max \(percentile(1.0)) ms")
        let peak = server.peakResidentBytes ?? 0
        print("server peak RSS: \(Figures.decimals(Double(peak) / 1_048_576, 1)) MiB (\(Figures.decimals(Double(idle) / 1_048_576, 1)) MiB before the attacks)")

        // What is stored is exactly what the normal client published.
        let exported = try KeyServerBench.runTool(
            server.path,
            ["export", "--data-dir", server.data, "--export-key", server.work + "/export.pem", "--region", "XB", "--directory", server.data + "/exports"])
        var stored = 0
        for name in KeyServerBench.writtenFiles(exported) {
            guard let zip = FileManager.default.contents(atPath: "\(server.data)/exports/\(name)") else { continue }
            stored += try JudgedKeyFile(zip: Array(zip), policy: SignaturePolicy(trustedKeys: [])).check().keys
        }
        let storedRight = stored == normal.shares * 30
        print("\(storedRight ? "ok  " : "FAIL") stored: \(stored) keys, the normal client's \(normal.shares * 30) and none of the attacks'")
        guard outcomes.allSatisfy(\.passed), normal.failures == 0, storedRight else { throw ExitCode(1) }
    }
}

/// The normal client: the configuration every 50 ms, and every second the whole sharing flow
/// (an administrator's code, verify, certificate, publish of 30 keys), timing every request.
final class NormalClient: Sendable {
    let port: Int
    private let state = Mutex((latencies: [Double](), failures: 0, shares: 0, stopped: false))

    init(port: Int) { self.port = port }

    var latencies: [Double] { state.withLock { $0.latencies } }
    var failures: Int { state.withLock { $0.failures } }
    var shares: Int { state.withLock { $0.shares } }
    func stop() { state.withLock { $0.stopped = true } }

    func run() async {
        let transport = TimedTransport(base: RawTransport(port: port, source: "127.0.0.1"), client: self)
        let base = "http://127.0.0.1:\(port)"
        var lastShare = ContinuousClock.now - .seconds(1)
        while !state.withLock({ $0.stopped }) {
            do {
                let response = try await transport.send(HTTPRequest(url: base + "/configuration.json", maximumResponseBytes: 4096))
                if response.status != 200 { record(failure: true) }
                if ContinuousClock.now - lastShare >= .seconds(1) {
                    lastShare = ContinuousClock.now
                    let upload = try await KeyServerBench.prepareUpload(base: base, transport: transport)
                    let publisher = PublishClient(publishURL: base + "/v1/publish", healthAuthorityID: "bench", transport: transport)
                    let result = try await publisher.publish(keys: upload.keys, certificate: upload.certificate, hmacSecret: upload.secret)
                    state.withLock { $0.shares += result.insertedExposures == 30 ? 1 : 0 }
                }
            } catch {
                record(failure: true)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    func record(latency: Double? = nil, failure: Bool = false) {
        state.withLock {
            if let latency { $0.latencies.append(latency) }
            if failure { $0.failures += 1 }
        }
    }
}

/// Times every request of the normal client.
struct TimedTransport: HTTPTransport {
    let base: RawTransport
    let client: NormalClient

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let start = ContinuousClock.now
        let response = try await base.send(request)
        client.record(latency: Figures.seconds(ContinuousClock.now - start) * 1000)
        return response
    }
}
