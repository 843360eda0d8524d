// SPDX-License-Identifier: GPL-3.0-or-later

package import Detection
import Foundation
package import ENCore
package import KeyFiles
package import Logging
import ServiceLifecycle
package import Storage
import UnixSignals
package import GaendConfiguration

/// The detection worker as the configuration describes it. Without a key server it downloads
/// nothing and has no timer, but it still loads, ages and answers with the stored results: they
/// are the owner's answer whether a server is configured or not (issue 40: without `index-url`,
/// status said "no exposure" beside a stored one).
package enum DetectionSetup {
    package static func worker(
        _ configuration: DaemonConfiguration, dataDirectory: DataDirectory, clock: any WallClock, transport: any HTTPTransport = CurlTransport(),
        observer: DetectionSignals, logger: Logger
    ) throws(DaemonConfigurationError) -> DetectionWorker {
        let servers = configuration.servers
        // Read first, with or without a key server: a file gaend cannot read stops it at start.
        let exposureConfiguration = try Self.exposureConfiguration(servers)
        guard let indexURL = servers.indexURL else {
            return DetectionWorker(
                dataDirectory: dataDirectory, downloader: nil, policy: SignaturePolicy(trustedKeys: []),
                defaultConfiguration: exposureConfiguration, clock: clock, observer: observer, logger: logger)
        }
        var trusted = [VerificationKey]()
        for key in servers.exportKeys {
            guard let pem = FileManager.default.contents(atPath: key.path) else {
                throw DaemonConfigurationError(key: "export-key", problem: "\(key.path) cannot be read")
            }
            do {
                trusted.append(try VerificationKey(keyID: key.id, keyVersion: key.version, pem: String(decoding: pem, as: UTF8.self)))
            } catch {
                throw DaemonConfigurationError(key: "export-key", problem: "\(key.path) is not a P-256 package key in PEM: \(error)")
            }
        }
        guard !trusted.isEmpty else {
            throw DaemonConfigurationError(key: "export-key", problem: "index-url is set but no export signing key is trusted")
        }
        var settings = DetectionWorker.Settings()
        settings.interval = .seconds(servers.detectionIntervalHours * 3600)
        var downloader = KeyFileDownloader(indexURL: indexURL, baseURL: servers.exportBaseURL, transport: transport)
        downloader.timeout = .seconds(servers.downloadTimeoutSeconds)
        return DetectionWorker(
            dataDirectory: dataDirectory, downloader: downloader, policy: SignaturePolicy(trustedKeys: trusted),
            defaultConfiguration: exposureConfiguration, clock: clock, observer: observer, settings: settings,
            configurationURL: servers.exposureConfigurationIsURL ? servers.exposureConfiguration : nil, logger: logger)
    }
}

extension DetectionSetup {
    /// The exposure configuration `exposure-configuration` names: its file read in whichever shape
    /// an authority served it (an error names the file and the key), or the built-in one when the
    /// key is unset or a URL (the worker fetches a URL's before each run).
    package static func exposureConfiguration(_ servers: DaemonConfiguration.ServerSettings) throws(DaemonConfigurationError) -> ExposureConfiguration {
        guard let path = servers.exposureConfiguration, !servers.exposureConfigurationIsURL else { return .builtIn }
        let read: ExposureConfiguration?
        do {
            read = try ExposureConfiguration(contentsOf: path)
        } catch {
            throw DaemonConfigurationError(key: "exposure-configuration", problem: "\(path): \(error)")
        }
        guard let read else { throw DaemonConfigurationError(key: "exposure-configuration", problem: "\(path) cannot be read") }
        return read
    }
}

/// The detection timer as a service (every `detection-interval` hours, ± 15 min).
package struct DetectionTimerService: Service {
    let worker: DetectionWorker

    package init(worker: DetectionWorker) { self.worker = worker }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await worker.runOnTimer() }
    }
}

/// SIGHUP: the configuration is read again and what can change at run time applied.
package struct ReloadService: Service {
    let reload: @Sendable () async -> Void

    package init(reload: @escaping @Sendable () async -> Void) { self.reload = reload }

    package func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals { await reload() }
        }
    }
}
