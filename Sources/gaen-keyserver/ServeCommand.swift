// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DaemonLog
import ENCore
import ENCrypto
import FlyingSocks
import Foundation
import KeyServer
import Logging

/// `gaen-keyserver serve`: the HTTP API over our bounded HTTP/1.1 layer on FlyingSocks
/// (Connection/; docs/keyserver.md says why not FlyingFox's HTTPServer), with exports written
/// on a timer.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serve the publish, verification and export APIs over HTTP.")

    @OptionGroup var options: ServerOptions

    @OptionGroup var codeKey: CodeHMACKeyOptions

    @Option(help: "The least severe log level written: trace, debug, info, notice, warning, error or critical.")
    var logLevel: LogLevelOption = .info

    @Option(help: "The IPv4 or IPv6 address to listen on (0.0.0.0 or :: for all).")
    var listen = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free one; the line printed says which).")
    var port: UInt16 = 8080

    @Option(help: "The verification signing key (PEM, P-256).", completion: .file(extensions: ["pem"]))
    var verificationKey: String

    @OptionGroup var export: ExportOptions

    @Option(help: "Health authority IDs whose publishes are accepted (repeatable).")
    var healthAuthority: [String] = []

    @Option(help: "The device API key (X-API-Key of /api/verify and /api/certificate); visible to local users, prefer --device-api-key-file.")
    var deviceAPIKey: String?

    @Option(help: "A file holding the device API key (else the systemd credential device-api-key, else $GAEN_KEYSERVER_DEVICE_API_KEY).", completion: .file())
    var deviceAPIKeyFile: String?

    @Option(help: "The administrator's API key for POST /admin/codes; visible to local users, prefer --admin-api-key-file.")
    var adminAPIKey: String?

    @Option(
        help: "A file holding the administrator's API key (else the credential admin-api-key, else $GAEN_KEYSERVER_ADMIN_API_KEY; none: the endpoint is off).")
    var adminAPIKeyFile: String?

    @Option(help: "The exposure configuration JSON served as /configuration.json.")
    var exposureConfiguration: String?

    @Option(help: "Seconds between export runs, at most 86400 (0: only `gaen-keyserver export`).")
    var exportInterval = 300

    @Option(help: "Seconds a still-valid key waits after its UTC day ends, at most 14 days (default 7200).")
    var embargoDelay: Int64 = 7200

    @Flag(help: "Demos and tests only: export still-valid keys at once instead of after their day (DEBUG_RELEASE_SAME_DAY_KEYS).")
    var releaseSameDayKeys = false

    @Option(help: "Requests each client may make to each of /api/verify, /api/certificate, /v1/publish and /admin/codes per minute (then 429).")
    var requestsPerMinute = 120

    @Option(help: "Failed attempts (wrong or expired codes, wrong API keys) a client may make per hour before its requests to those taking a secret get 429.")
    var failedAttemptsPerHour = 30

    @Option(name: .customLong("failed-attempts-per-56"), help: "Failed attempts the clients of one IPv6 /56 may make per hour together.")
    var failedAttemptsPer56 = 300

    @Option(name: .customLong("failed-attempts-per-48"), help: "Failed attempts the clients of one IPv6 /48 may make per hour together.")
    var failedAttemptsPer48 = 3000

    @Option(help: "Failed attempts of all clients together per minute; past it, clients not seen in the last hour get 429 (logged).")
    var failedAttemptsServerWide = 600

    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp(
            "A reverse proxy's network, CIDR (repeatable; none by default).",
            discussion:
                "From these the client is the right-most address of X-Forwarded-For (or Forwarded's for=) that is not a trusted proxy; from anyone else those headers are ignored.",
            valueName: "cidr"))
    var trustedProxy: [String] = []

    @Option(help: "Connections open at once; past it a new one is answered 503 and closed.")
    var maxConnections = 512

    @Option(
        help:
            "Connections one client (an IPv4 address, an IPv6 /64) may hold at once; past it its new one is answered 503 and closed. Trusted proxies are not counted."
    )
    var maxConnectionsPerClient = 32

    @Option(help: "Seconds a new connection may wait before its first byte.")
    var firstByteTimeout = 5.0

    @Option(help: "Seconds a kept-alive connection may wait for its next request.")
    var idleTimeout = 30.0

    @Option(help: "Seconds from a request's first byte to the end of its body; past it 408.")
    var requestTimeout = 15.0

    @Option(help: "Seconds to write a response.")
    var writeTimeout = 15.0

    @Flag(inversion: .prefixedNo, help: "One line per request on standard error: client, method, path, status, bytes, time; never a secret.")
    var accessLog = true

    /// The longest wait between export runs: a day (a sleep past what a Duration's nanoseconds
    /// hold traps).
    static let exportIntervals = 0...86_400

    func validate() throws {
        try checkOption(embargoDelay, in: PublishValidator.embargoDelays, "--embargo-delay", unit: "seconds")
        try checkOption(exportInterval, in: Self.exportIntervals, "--export-interval", unit: "seconds")
        try checkOption(requestsPerMinute, in: RateLimit.tokenRange, "--requests-per-minute", unit: "requests")
        try checkOption(failedAttemptsPerHour, in: RateLimit.tokenRange, "--failed-attempts-per-hour", unit: "attempts")
        try checkOption(failedAttemptsPer56, in: RateLimit.tokenRange, "--failed-attempts-per-56", unit: "attempts")
        try checkOption(failedAttemptsPer48, in: RateLimit.tokenRange, "--failed-attempts-per-48", unit: "attempts")
        try checkOption(failedAttemptsServerWide, in: RateLimit.tokenRange, "--failed-attempts-server-wide", unit: "attempts")
        try checkOption(maxConnections, in: Self.connectionRange, "--max-connections", unit: "connections")
        try checkOption(maxConnectionsPerClient, in: Self.connectionRange, "--max-connections-per-client", unit: "connections")
        try checkOption(firstByteTimeout, in: Self.timeoutRange, "--first-byte-timeout", unit: "seconds")
        try checkOption(idleTimeout, in: Self.timeoutRange, "--idle-timeout", unit: "seconds")
        try checkOption(requestTimeout, in: Self.timeoutRange, "--request-timeout", unit: "seconds")
        try checkOption(writeTimeout, in: Self.timeoutRange, "--write-timeout", unit: "seconds")
        _ = try listenAddress
        do {
            _ = try TrustedProxies(parsing: trustedProxy)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Connections: each costs a descriptor and a task; the soft descriptor limit is 1,024 by default.
    static let connectionRange = 1...10_000
    /// Timeouts: a tenth of a second to an hour (the watchdog counts milliseconds).
    static let timeoutRange = 0.1...3600.0

    var listenAddress: IPAddress {
        get throws {
            guard let address = IPAddress(listen) else { throw ValidationError("--listen: '\(listen)' is not an IPv4 or IPv6 address") }
            return address
        }
    }

    var httpLimits: HTTPLimits {
        var limits = HTTPLimits()
        limits.connections = maxConnections
        limits.connectionsPerClient = maxConnectionsPerClient
        limits.firstByteTimeout = firstByteTimeout
        limits.idleTimeout = idleTimeout
        limits.requestTimeout = requestTimeout
        limits.writeTimeout = writeTimeout
        return limits
    }

    var requestLimits: RequestLimits.Settings {
        var settings = RequestLimits.Settings()
        settings.requests = RateLimit(tokens: requestsPerMinute, interval: 60)
        settings.failures = RateLimit(tokens: failedAttemptsPerHour, interval: 3600)
        settings.failuresPer56 = RateLimit(tokens: failedAttemptsPer56, interval: 3600)
        settings.failuresPer48 = RateLimit(tokens: failedAttemptsPer48, interval: 3600)
        settings.failuresServerWide = RateLimit(tokens: failedAttemptsServerWide, interval: 60)
        return settings
    }

    func run() async throws {
        // First: every logger made from here on (the limits' among them) writes where gaen-keyserver's do.
        DaemonLogging.bootstrap(threshold: LogThreshold(Logger.Level(rawValue: logLevel.rawValue) ?? .info), environment: ProcessInfo.processInfo.environment)
        guard !healthAuthority.isEmpty else { throw ValidationError("--health-authority: at least one is needed") }
        guard
            let deviceAPIKey = try APIKeySource(option: "--device-api-key", credential: "device-api-key").resolve(
                value: deviceAPIKey, file: deviceAPIKeyFile, environment: "GAEN_KEYSERVER_DEVICE_API_KEY")
        else {
            throw ValidationError("--device-api-key-file: the device API key is needed (or the credential device-api-key, or $GAEN_KEYSERVER_DEVICE_API_KEY)")
        }
        let adminAPIKey = try APIKeySource(option: "--admin-api-key", credential: "admin-api-key").resolve(
            value: adminAPIKey, file: adminAPIKeyFile, environment: "GAEN_KEYSERVER_ADMIN_API_KEY")
        let signing = try privateKey(verificationKey, option: "--verification-key")
        let store = try options.openKeyStore()
        let verifier = try options.openVerifier(signingKey: signing, codeKey: codeKey)
        // SQLite's exports are also written to --data-dir for a static server; on PostgreSQL the
        // database alone holds them, for every replica.
        let exportDirectory = options.database == nil ? options.dataDir.map { $0 + "/exports" } : nil
        let exportSettings = try export.settings(directory: exportDirectory)
        let location = try options.location(sqliteFile: "keys.sqlite")
        let exports: ExportFiles
        let failures: FailureLevels?
        do throws(DatabaseError) {
            exports = try ExportFiles(location, root: exportSettings.root, directory: exportDirectory)
            // Replicas share the budgets of failed attempts through the database they share.
            if let database = options.database {
                failures = try FailureLevels(requestLimits) { (level, limit) throws(DatabaseError) in
                    try SharedFailureBudget(connectionString: database, limit: limit, table: level.table)
                }
            } else {
                failures = nil
            }
        } catch {
            throw DatabaseOpenError(location: location, error: error)
        }
        var settings = KeyServerAPI.Settings(
            healthAuthorities: Set(healthAuthority), deviceAPIKey: deviceAPIKey, exportDirectory: exportDirectory ?? "")
        settings.adminAPIKey = adminAPIKey
        settings.exposureConfigurationPath = exposureConfiguration
        var validator = PublishValidator()
        validator.embargoDelay = embargoDelay
        validator.releaseSameDayKeys = releaseSameDayKeys
        let api = KeyServerAPI(
            store: store, verifier: verifier,
            check: CertificateCheck(
                verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: verifier.settings.issuer, audience: verifier.settings.audience),
            validator: validator, settings: settings, limits: RequestLimits(requestLimits, failures: failures, logger: Logger(label: "gaen-keyserver.limits")),
            exports: exports,
            clock: { SystemClockTime.now })
        let exporter = ExportWorker(store: store, signingKey: try export.signingKey(), settings: exportSettings)

        let server = BoundedHTTPServer(
            limits: httpLimits, trustedProxies: try TrustedProxies(parsing: trustedProxy), pool: NoDelaySocketPool(base: SocketPool<ePoll>.ePoll()),
            accessLog: accessLog ? AccessLog() : nil
        ) { await api.handle($0) }
        let address = try listenAddress
        let listener = try server.listen(on: address, port: port)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run(on: listener) }
            var actual = port
            switch try? listener.sockname() {
            case .ip4(_, let bound)?, .ip6(_, let bound)?: actual = bound
            default: break
            }
            // Scripts wait for this line and take the port after its last colon.
            let shown = address.isIPv4 ? address.description : "[\(address)]"
            FileHandle.standardOutput.write(Data("listening on \(shown):\(actual)\n".utf8))
            if exportInterval > 0 {
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            for name in try await exporter.run(now: SystemClockTime.now).files {
                                FileHandle.standardOutput.write(Data("exported \(name)\n".utf8))
                            }
                        } catch {
                            FileHandle.standardError.write(Data("gaen-keyserver: export failed: \(error)\n".utf8))
                        }
                        try await Task.sleep(for: .seconds(exportInterval))
                    }
                }
            }
            try await group.next()
        }
    }
}

/// swift-log's levels, as `--log-level` takes them.
enum LogLevelOption: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical
}
