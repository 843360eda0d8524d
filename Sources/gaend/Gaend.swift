// SPDX-License-Identifier: GPL-3.0-or-later

import BuildRevision
import ArgumentParser
import ClockTrust
import CommandSupport
import ContactLog
import Detection
import Executors
import Daemon
import OwnerSignals
import DaemonLog
import ENCore
import HCI
import Foundation
import KeySchedule
import Logging
import Beacon
import BlueZ
import HCIBeacon
import ServiceLifecycle
import Storage
import UnixSignals
import GaendConfiguration
import SystemCalls

/// The program's entry: gaend on executors of its own (`Executors.OwnExecutors`), so that an idle
/// daemon sleeps (docs/daemon.md, "Idle").
@main
enum GaendEntry {
    static func main() {
        OwnExecutors.run { await Gaend.mainExitingTwoOnUsage() }
    }
}

/// The daemon: configuration, then the services in one group until SIGTERM/SIGINT.
struct Gaend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gaend",
        abstract: "The GAEN (Exposure Notification) daemon: advertise, scan, keep the contact log.",
        discussion: """
            Every configuration key is also an option, --KEY VALUE or --KEY=VALUE, applied after the \
            file: the command line wins. A bad value exits 2 naming its key. SIGTERM or SIGINT stop it \
            cleanly within 10 s. The keys:

            """ + ConfigurationKey.all.map { "  --\($0.name) VALUE\n        \($0.help)" }.joined(separator: "\n"),
        version: BuildVersion.string)

    @Option(help: "The configuration file.", completion: .file(extensions: ["conf"]))
    var config: String?

    /// The configuration keys given on the command line (`--radio none`, `--scan-window=2`), read
    /// by the table in GaendAPI, the one place keys are written.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Configuration keys, each as --KEY VALUE (listed below).", valueName: "--key value"))
    var settings: [String] = []

    /// The configuration file, then the command line.
    func loadConfiguration() throws(DaemonConfigurationError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        let path = config ?? "/etc/gaend/gaend.conf"
        if let text = try ConfigurationFile.read(path) {
            try configuration.apply(file: text, path: path)
        } else if config != nil {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) cannot be read")
        }
        for (key, value) in try Self.pairs(settings) { try configuration.set(key, value) }
        return configuration
    }

    /// `--key value` and `--key=value` pairs, in order; anything else is refused by name.
    static func pairs(_ arguments: [String]) throws(DaemonConfigurationError) -> [(key: String, value: String)] {
        var pairs = [(key: String, value: String)]()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw DaemonConfigurationError(key: argument, problem: "expected --KEY VALUE (gaend --help lists the keys)")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            guard ConfigurationKey.named(name) != nil else {
                throw DaemonConfigurationError(key: name, problem: "not a configuration key (gaend --help lists them)")
            }
            if let equals = body.firstIndex(of: "=") {
                pairs.append((String(body[..<equals]), String(body[body.index(after: equals)...])))
                index += 1
            } else {
                guard index + 1 < arguments.count else { throw DaemonConfigurationError(key: String(body), problem: "has no value") }
                pairs.append((String(body), arguments[index + 1]))
                index += 2
            }
        }
        return pairs
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

        let threshold = LogThreshold(Logger.Level(configuration.logLevel))
        DaemonLogging.bootstrap(threshold: threshold, environment: ProcessInfo.processInfo.environment)
        let logger = Logger(label: "gaend")
        // The wall clock with its verdict: everything that keeps, broadcasts or deletes by it asks.
        let clock = ClockTrustBoard(policy: configuration.clock == .system ? .system : .synchronized, readings: SystemClockReadings())
        let transport = WitnessingTransport(board: clock)
        let data = DataDirectory(path: configuration.dataDirectory)
        let signals = DetectionSignals()
        let worker: DetectionWorker
        do {
            worker = try DetectionSetup.worker(
                configuration, dataDirectory: data, clock: clock, transport: transport, observer: signals, logger: Logger(label: "gaend.detection"))
        } catch {
            FileHandle.standardError.write(Data("gaend: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let hookSettings: HookSettings?
        do {
            hookSettings = try HookSettings.checked(configuration)
        } catch {
            FileHandle.standardError.write(Data("gaend: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let keys: KeySchedule
        let log: ContactLogWriter
        let held: HeldSightings
        do {
            keys = try KeySchedule.openSettingAside(dataDirectory: data, clock: clock, logger: Logger(label: "gaend.keys"))
            try await keys.pruneExpiredKeys()
            log = try ContactLogWriter(dataDirectory: data, clock: clock, logger: Logger(label: "gaend.contacts"))
            held = try HeldSightings(dataDirectory: data, bootID: clock.bootID, logger: Logger(label: "gaend.contacts"))
        } catch {
            logger.critical("cannot open the data directory", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        logger.notice(
            "gaend starting",
            metadata: [
                "version": "\(BuildVersion.string)", "radio": "\(configuration.radio)", "dataDir": "\(configuration.dataDirectory)",
                "clock": "\(configuration.clock.rawValue)", "clock.trusted": "\(clock.verdict.trusted)",
            ])
        let plain = configuration.servers.plainHTTPKeys
        if !plain.isEmpty {
            // Issue 40, item 17: over http:// anyone on the path can answer for the server, and its
            // Date (the clock's witness) can keep the beacon silent. Allowed (a test server, a home
            // network), never silently.
            logger.warning(
                "servers over plain HTTP: anyone on the path can change their answers, and a forged Date stops advertising until a later answer agrees; use https://",
                metadata: ["keys": "\(plain.joined(separator: ", "))"])
        }
        let status = RadioStatusBoard(configuration.radio == .none ? .none : .starting, logger: Logger(label: "gaend.radio"))
        let gate = EnablementGate(enabled: false)
        let onAir = OnAirBoard()
        let manager: Manager
        do {
            manager = try Manager(
                dataDirectory: data, keys: keys, log: log, worker: worker, radioStatus: status, gate: gate,
                settings: Self.managerSettings(started: configuration, reloaded: configuration, file: configurationFile), clock: clock,
                transport: transport, onAir: onAir, clockTrust: clock, held: held)
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
                logger: Logger(label: "gaend.dbus"), ownerGroup: configuration.ownerGroup)
        ]
        services.append(ClockService(board: clock, held: held, log: log))
        if let name = configuration.indicatorLED {
            let led = SysfsLED(name: name, logger: Logger(label: "gaend.indicator"))
            services.append(IndicatorService(led: led, source: manager, logger: Logger(label: "gaend.indicator")))
        }
        let beacon = BeaconContext(
            settings: configuration.radioSettings, keys: keys, log: log, clock: clock, gate: gate, status: status, onAir: onAir,
            untrusted: UntrustedWindows(held: held, bootMilliseconds: { clock.bootMilliseconds() }), clockShifts: clock.shifts,
            logger: Logger(label: "gaend.radio"))
        if case .bluez(let index) = configuration.radio {
            services.append(
                BeaconDriver(
                    backend: BlueZBackend(adapterIndex: index, txPower: configuration.radioSettings.txPower ?? 0, logger: beacon.logger), context: beacon))
        } else if configuration.radio != .none {
            services.append(BeaconDriver(backend: HCIBackend(spec: configuration.radio, logger: beacon.logger), context: beacon))
        }
        let hookRunner = ExposureHookRunner(settings: hookSettings, logger: Logger(label: "gaend.hook"))
        if worker.canDownload { services.append(DetectionTimerService(worker: worker)) }
        // With or without a key server: the stored results age out at midnight, and are told.
        services.append(ExposureHookService(worker: worker, runner: hookRunner, clock: clock, dataDirectory: data, logger: Logger(label: "gaend.hook")))
        let reloader = self
        services.append(
            ReloadService {
                notifier.notify("RELOADING=1")
                do {
                    let next = try reloader.loadConfiguration()
                    // A hook that is not (or no longer) an executable file is a warning: the one running stays.
                    do {
                        await hookRunner.configure(try HookSettings.checked(next))
                    } catch {
                        logger.warning("exposure-hook not applied; the previous one stays", metadata: ["error": "\(error)"])
                    }
                    let exposureConfiguration = try DetectionSetup.exposureConfiguration(next.servers)
                    await worker.store.reconfigure(
                        exposureConfiguration, url: next.servers.exposureConfigurationIsURL ? next.servers.exposureConfiguration : nil)
                    let settings = Self.managerSettings(started: configuration, reloaded: next, file: reloader.configurationFile)
                    let pending = settings.running.restartPending
                    await manager.reload(settings)
                    threshold.level = Logger.Level(next.logLevel)
                    if pending.isEmpty {
                        logger.notice("configuration reloaded")
                    } else {
                        logger.warning(
                            "configuration reloaded; these keys take effect at restart", metadata: ["keys": "\(pending.joined(separator: ", "))"])
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

    /// The configuration file read, when there is one.
    var configurationFile: String {
        let path = config ?? "/etc/gaend/gaend.conf"
        return FileManager.default.fileExists(atPath: path) ? path : ""
    }

    /// The manager's settings: what a reload applies (`ConfigurationKey.appliedOnReload`) from the
    /// configuration last read, the rest (the radio, the key server) as gaend started with it, and
    /// the keys that wait for a restart. At start both are the same.
    static func managerSettings(started: DaemonConfiguration, reloaded: DaemonConfiguration, file: String) -> Manager.Settings {
        var settings = Manager.Settings()
        settings.running = Manager.RunningConfiguration(
            file: file, values: ConfigurationKey.runningValues(started: started, reloaded: reloaded),
            restartPending: ConfigurationKey.waitingForRestart(started: started, reloaded: reloaded))
        settings.region = reloaded.region
        settings.testMode = reloaded.testMode
        settings.radio = started.radio
        settings.keyServer = started.servers.indexURL ?? ""
        let servers = reloaded.servers
        if let verification = servers.verificationURL, let publish = servers.publishURL {
            settings.sharing = Manager.SharingSettings(
                verificationURL: verification, apiKey: servers.verificationAPIKey, publishURL: publish, healthAuthorityID: servers.healthAuthorityID)
        }
        return settings
    }
}

extension Logger.Level {
    init(_ name: LogLevelName) {
        self = Logger.Level(rawValue: name.rawValue) ?? .info
    }
}
