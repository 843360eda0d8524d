// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import Detection
import Daemon
import ENCore
import HCI
import Foundation
import KeySchedule
import Logging
import Radio
import ServiceLifecycle
import Storage
import UnixSignals

/// The daemon's entry point: configuration, then the services in one group until SIGTERM/SIGINT.
@main
struct Gaend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gaend",
        abstract: "The GAEN (Exposure Notification) daemon: advertise, scan, keep the contact log.",
        discussion: """
            Every option is also a key of the configuration file (key = value lines); the command line \
            wins. A bad value exits 2 naming its key. SIGTERM or SIGINT stop it cleanly within 10 s.
            """,
        version: GaendVersion.string)

    @Option(help: "The configuration file.")
    var config: String?

    @Option(help: "The radio: hci:hciN, bluez:hciN, h4:/dev/ttyX[@baud], h4+unix:PATH, h4+tcp:HOST:PORT or none.")
    var radio: String?

    @Option(help: "The data directory (default /var/lib/gaend).")
    var dataDir: String?

    @Option(help: "Seconds each scan window lasts (default 4).")
    var scanWindow: String?

    @Option(help: "Seconds between scan windows, MIN-MAX (default 210-300), or continuous.")
    var scanInterval: String?

    @Option(help: "Seconds between address and RPI rotations, MIN-MAX (default 600-1200).")
    var rotationInterval: String?

    @Option(help: "TX power to advertise in the metadata, dBm (default: the controller's).")
    var txPower: String?

    @Option(help: "Added to every RSSI heard, dB (default 0).")
    var rssiCorrection: String?

    @Option(help: "Calibration confidence to advertise: lowest, low, medium or high (default lowest).")
    var calibrationConfidence: String?

    @Option(help: "Where to serve org.gaend.Manager1: system (default), session, none or a bus address.")
    var bus: String?

    @Option(help: "true: enable Exposure Notification at start, recording the owner's consent (default false).")
    var enable: String?

    @Option(help: "The health authority's region (shown in the API).")
    var region: String?

    @Option(help: "true: allow GetTestDiagnosisKeys (default false).")
    var testMode: String?

    @Option(help: "The key server's index.txt URL.")
    var indexURL: String?

    @Option(help: "The URL the index's paths are relative to (default: from the index URL and its lines).")
    var exportBaseURL: String?

    @Option(help: "A trusted export signing key: KEYID:VERSION:/path/to/public.pem (repeatable).")
    var exportKey: [String] = []

    @Option(help: "The exposure configuration: a JSON file, or an http(s) URL fetched before each detection (default: v2 defaults).")
    var exposureConfiguration: String?

    @Option(help: "Hours between scheduled detections (default 4).")
    var detectionInterval: String?

    @Option(help: "The verification server's base URL.")
    var verificationURL: String?

    @Option(help: "The verification server's device API key.")
    var verificationAPIKey: String?

    @Option(help: "The key server's publish URL.")
    var publishURL: String?

    @Option(help: "The health authority ID the key server knows this app by.")
    var healthAuthorityID: String?

    /// The configuration file, then the command line.
    func loadConfiguration() throws(DaemonConfigurationError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        let path = config ?? "/etc/gaend/gaend.conf"
        if let data = FileManager.default.contents(atPath: path) {
            try configuration.apply(file: String(decoding: data, as: UTF8.self), path: path)
        } else if config != nil {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) cannot be read")
        }
        let options: [(String, String?)] = [
            ("radio", radio), ("data-dir", dataDir), ("scan-window", scanWindow), ("scan-interval", scanInterval),
            ("rotation-interval", rotationInterval), ("tx-power", txPower), ("rssi-correction", rssiCorrection),
            ("calibration-confidence", calibrationConfidence), ("bus", bus), ("enable", enable), ("region", region), ("test-mode", testMode),
            ("index-url", indexURL), ("export-base-url", exportBaseURL), ("exposure-configuration", exposureConfiguration),
            ("detection-interval", detectionInterval), ("verification-url", verificationURL), ("verification-api-key", verificationAPIKey),
            ("publish-url", publishURL), ("health-authority-id", healthAuthorityID),
        ] + exportKey.map { ("export-key", $0) }
        for case let (key, value?) in options { try configuration.set(key, value) }
        return configuration
    }

    /// Parses and runs like argument-parser's own `main`, but a usage error exits 2, the code the
    /// documentation (and gaenctl) gives usage errors, not argument-parser's EX_USAGE (64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            exit(withError: ExitCode(2))
        }
    }

    mutating func run() async throws {
        MemoryPolicy.apply()
        let configuration: DaemonConfiguration
        do {
            configuration = try loadConfiguration()
        } catch {
            FileHandle.standardError.write(Data("gaend: \(error)\n".utf8))
            throw ExitCode(2)
        }

        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "gaend")
        let clock = SystemWallClock()
        let data = DataDirectory(path: configuration.dataDirectory)
        let signals = DetectionSignals()
        let worker: DetectionWorker?
        do {
            worker = try DetectionSetup.worker(configuration, dataDirectory: data, clock: clock, observer: signals, logger: Logger(label: "gaend.detection"))
        } catch {
            FileHandle.standardError.write(Data("gaend: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let keys: KeySchedule
        let log: ContactLogWriter
        do {
            keys = try KeySchedule.openSettingAside(dataDirectory: data, clock: clock, logger: Logger(label: "gaend.keys"))
            try await keys.pruneExpiredKeys()
            log = try ContactLogWriter(dataDirectory: data, clock: clock, logger: Logger(label: "gaend.contacts"))
        } catch {
            logger.critical("cannot open the data directory", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        logger.notice(
            "gaend starting",
            metadata: ["version": "\(GaendVersion.string)", "radio": "\(configuration.radio)", "dataDir": "\(configuration.dataDirectory)"])
        let status = RadioStatusBoard(configuration.radio == .none ? .none : .starting, logger: Logger(label: "gaend.radio"))
        let gate = EnablementGate(enabled: false)
        let manager: Manager
        do {
            manager = try Manager(
                dataDirectory: data, keys: keys, log: log, worker: worker, radioStatus: status, gate: gate,
                settings: Self.managerSettings(configuration), clock: clock)
            if configuration.enable { try await manager.enableFromConfiguration() }
        } catch {
            logger.critical("cannot read the owner's settings", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }

        // A ServiceGroup stops its services in reverse order: the reload handler, the detection
        // timer and the radio first, the D-Bus service last.
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        var services: [any Service] = [
            ManagerService(
                manager: manager, bus: configuration.bus, radioStatus: status, gate: gate, signals: signals, notifier: notifier,
                logger: Logger(label: "gaend.dbus"))
        ]
        if case .bluez(let index) = configuration.radio {
            services.append(
                BlueZRadioService(
                    adapterIndex: index, settings: configuration.radioSettings, keys: keys, log: log, clock: clock, status: status, gate: gate,
                    logger: Logger(label: "gaend.radio")))
        } else if configuration.radio != .none {
            services.append(
                RadioService(
                    spec: configuration.radio, settings: configuration.radioSettings, keys: keys, log: log, clock: clock, gate: gate, status: status,
                    logger: Logger(label: "gaend.radio")))
        }
        if let worker { services.append(DetectionTimerService(worker: worker)) }
        let reloader = self
        services.append(
            ReloadService {
                notifier.notify("RELOADING=1")
                do {
                    let next = try reloader.loadConfiguration()
                    await manager.reload(Self.managerSettings(next))
                    if next.radio != configuration.radio || next.dataDirectory != configuration.dataDirectory || next.radioSettings != configuration.radioSettings
                        || next.bus != configuration.bus || next.servers != configuration.servers
                    {
                        logger.warning("configuration reloaded; radio, data directory, bus and server changes take effect at restart")
                    } else {
                        logger.notice("configuration reloaded")
                    }
                } catch {
                    logger.error("configuration not reloaded: it has an error", metadata: ["error": "\(error)"])
                }
                notifier.notify("READY=1")
            })
        var groupConfiguration = ServiceGroupConfiguration(services: services, logger: logger)
        groupConfiguration.gracefulShutdownSignals = [.sigterm, .sigint]
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(8)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            logger.critical("gaend failed", metadata: ["error": "\(error)"])
            try? await log.sync()
            FileHandle.standardError.write(Data("gaend: \(error)\n".utf8))
            throw ExitCode(1)
        }
        try await log.sync()
        logger.notice("gaend stopped")
    }

    static func managerSettings(_ configuration: DaemonConfiguration) -> Manager.Settings {
        var settings = Manager.Settings()
        settings.region = configuration.region
        settings.testMode = configuration.testMode
        settings.radio = "\(configuration.radio)"
        let servers = configuration.servers
        if let verification = servers.verificationURL, let publish = servers.publishURL {
            settings.sharing = Manager.SharingSettings(
                verificationURL: verification, apiKey: servers.verificationAPIKey, publishURL: publish, healthAuthorityID: servers.healthAuthorityID)
        }
        return settings
    }
}
