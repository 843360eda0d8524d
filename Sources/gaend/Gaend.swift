// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
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

    mutating func run() async throws {
        var configuration = DaemonConfiguration()
        do {
            let path = config ?? "/etc/gaend/gaend.conf"
            if let data = FileManager.default.contents(atPath: path) {
                try configuration.apply(file: String(decoding: data, as: UTF8.self), path: path)
            } else if config != nil {
                throw DaemonConfigurationError(key: "--config", problem: "\(path) cannot be read")
            }
            let options: [(String, String?)] = [
                ("radio", radio), ("data-dir", dataDir), ("scan-window", scanWindow), ("scan-interval", scanInterval),
                ("rotation-interval", rotationInterval), ("tx-power", txPower), ("rssi-correction", rssiCorrection),
                ("calibration-confidence", calibrationConfidence),
            ]
            for case let (key, value?) in options { try configuration.set(key, value) }
        } catch {
            FileHandle.standardError.write(Data("gaend: \(error)\n".utf8))
            throw ExitCode(2)
        }

        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "gaend")
        let clock = SystemWallClock()
        let data = DataDirectory(path: configuration.dataDirectory)
        let keys: KeySchedule
        let log: ContactLogWriter
        do {
            keys = try KeySchedule(dataDirectory: data, clock: clock, logger: Logger(label: "gaend.keys"))
            try await keys.pruneExpiredKeys()
            log = try ContactLogWriter(dataDirectory: data, clock: clock, logger: Logger(label: "gaend.contacts"))
        } catch {
            logger.critical("cannot open the data directory", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        logger.notice(
            "gaend starting",
            metadata: ["version": "\(GaendVersion.string)", "radio": "\(configuration.radio)", "dataDir": "\(configuration.dataDirectory)"])
        var services = [any Service]()
        let status = RadioStatusBoard(configuration.radio == .none ? .none : .starting, logger: Logger(label: "gaend.radio"))
        if case .bluez(let index) = configuration.radio {
            services.append(
                BlueZRadioService(
                    adapterIndex: index, settings: configuration.radioSettings, keys: keys, log: log, clock: clock, status: status,
                    logger: Logger(label: "gaend.radio")))
        } else if configuration.radio != .none {
            services.append(
                RadioService(
                    spec: configuration.radio, settings: configuration.radioSettings, keys: keys, log: log, clock: clock,
                    logger: Logger(label: "gaend.radio")))
        } else {
            services.append(IdleService())
        }
        var groupConfiguration = ServiceGroupConfiguration(services: services, logger: logger)
        groupConfiguration.gracefulShutdownSignals = [.sigterm, .sigint]
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(8)
        try await ServiceGroup(configuration: groupConfiguration).run()
        try await log.sync()
        logger.notice("gaend stopped")
    }
}

/// Keeps the group alive with no radio, until shutdown.
struct IdleService: Service {
    func run() async throws {
        try? await gracefulShutdown()
    }
}
