// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
package import Detection
package import ENCore
import ENCrypto
package import Foundation
import KeyFiles
import Logging
import Storage

/// What one receiver's code made of what it heard from one transmitter.
package struct ReplayPair: Sendable {
    package var receiver: String
    package var transmitter: String
    /// In time order.
    package var windows: [ExposureWindow]
    package var scores: WindowScores
}

/// The replay's counts.
package struct ReplayStatistics: Sendable {
    package var rows = 0
    package var receivers = 0
    package var transmitters = 0
    /// Scans formed (GMS's cut: sightings more than 25.5 s apart start a new one).
    package var scans = 0
    /// Aggregates the scanner wrote (one per RPI heard in a scan).
    package var aggregates = 0
    package var keys = 0
    package var matchedKeys = 0
    package var windows = 0
    package var pairsHeard = 0
    package var pairsExposed = 0
}

/// A recording of sightings sent through gaend's own path from sightings to the wearer's answer
/// (docs/detection.md, "Replaying recorded encounters"), one receiver at a time:
///
/// 1. its sightings cut into scans as GMS forms them: a sighting more than 25.5 s after the previous
///    one starts a new scan (`BleScannerImpl`), so each scan's previous scan end is the receiver's
///    previous scan's last sighting, whoever it heard;
/// 2. each scan folded by the scanner's own `ScanWindowAggregator` (one aggregate per RPI, the RSSI
///    correction) and appended by a `ContactLogWriter` to a temporary data directory, on the
///    recording's clock;
/// 3. every transmitter given one key per UTC day (`ReplayKeys`), each sighting the RPI of its
///    interval and an AEM saying `txPower`;
/// 4. those keys in one signed key file, matched by the `DetectionPipeline` against the log, each
///    matched key's windows built by `WindowBuilder` and scored by `ExposureJudge` per transmitter.
package struct TraceReplay {
    package struct Settings: Sendable {
        package var configuration: ExposureConfiguration
        /// The TX power the transmitters' metadata says.
        package var txPower: Int8 = -24
        /// Added to every raw RSSI, as `rssi-correction`.
        package var rssiCorrection: Int = 5
        /// The day scored on; the last sighting's day when nil.
        package var today: UTCDay?

        package init(configuration: ExposureConfiguration) {
            self.configuration = configuration
        }
    }

    /// GMS's cut between scans (`sightingInTheSameScanInstance`'s 25.5 s).
    package static let scanGapMilliseconds: Int64 = 25_500

    let settings: Settings
    let scratch: URL

    /// `scratch` is an empty directory the replay may fill; the caller removes it.
    package init(settings: Settings, scratch: URL) {
        self.settings = settings
        self.scratch = scratch
    }

    package func run(_ sightings: [RecordedSighting]) async throws -> (pairs: [ReplayPair], statistics: ReplayStatistics) {
        var statistics = ReplayStatistics()
        statistics.rows = sightings.count
        guard let last = sightings.map(\.time).max() else { return ([], statistics) }
        let keys = try ReplayKeys(txPower: settings.txPower)
        let today = settings.today ?? UTCDay(containing: last)
        // Matched at the end of the day scored on: every window's day is judged as of then.
        let now = UnixTime(seconds: today.start.seconds + 86_399)
        let byReceiver = Dictionary(grouping: sightings, by: \.receiver)
        let transmitters = Set(sightings.map(\.transmitter))
        statistics.receivers = byReceiver.count
        statistics.transmitters = transmitters.count

        // Every transmitter's key for every day any receiver heard it, in one file the pipeline
        // verifies as it verifies a server's.
        var owners = [Bytes16: String]()
        var exportKeys = [DiagnosisKey]()
        for heard in Set(sightings.map { TransmitterDay(transmitter: $0.transmitter, day: UTCDay(containing: $0.time)) })
            .sorted(by: { ($0.transmitter, $0.day) < ($1.transmitter, $1.day) })
        {
            let (transmitter, day) = (heard.transmitter, heard.day)
            let data = ReplayKeys.key(transmitter: transmitter, day: day)
            owners[data] = transmitter
            guard let start = day.firstInterval else { continue }
            exportKeys.append(
                DiagnosisKey(
                    key: try TemporaryExposureKey(keyData: data, rollingStartIntervalNumber: start), transmissionRiskLevel: 0, reportType: .confirmedTest,
                    daysSinceOnsetOfSymptoms: 0))
        }
        statistics.keys = exportKeys.count
        let signing = try ECDSAPrivateKey()
        let file = try KeyFileWriter(signingKey: signing, keyID: "replay", keyVersion: "v1").archive(
            KeyExport(startTimestamp: 0, endTimestamp: UInt64(max(0, now.seconds)), region: "REPLAY", keys: exportKeys))
        let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "replay", keyVersion: "v1", pem: signing.publicKeyPEM)])
        let v2 = settings.configuration.v2 ?? V2Configuration()

        var pairs = [ReplayPair]()
        for (index, receiver) in byReceiver.keys.sorted().enumerated() {
            let heard = byReceiver[receiver]!.sorted { $0.time < $1.time }
            let data = DataDirectory(path: scratch.appendingPathComponent("receiver-\(index)").path)
            let written = try await Self.log(heard, into: data, keys: keys, rssiCorrection: settings.rssiCorrection)
            statistics.scans += written.scans
            statistics.aggregates += written.aggregates
            let pipeline = DetectionPipeline(reader: ContactLogReader(dataDirectory: data), policy: policy, parallelism: 1)
            let run = try await pipeline.run(files: [("replay.zip", file)], configuration: settings.configuration, now: now)
            statistics.matchedKeys += run.results.results.count
            var windowsByTransmitter = [String: [ExposureWindow]]()
            for result in run.results.results {
                guard let transmitter = owners[result.match.key.key.keyData] else { continue }
                let windows = WindowBuilder.windows(for: result.match, configuration: v2).map { window in
                    var window = window
                    window.matchedAt = result.matchedAt
                    return window
                }
                windowsByTransmitter[transmitter, default: []] += windows
            }
            for transmitter in windowsByTransmitter.keys.sorted() {
                let windows = windowsByTransmitter[transmitter]!.sorted { ($0.start ?? $0.day.start) < ($1.start ?? $1.day.start) }
                let scores = ExposureJudge.score(windows, configuration: settings.configuration, today: today)
                statistics.windows += windows.count
                statistics.pairsHeard += 1
                if scores.verdict.exposed { statistics.pairsExposed += 1 }
                pairs.append(ReplayPair(receiver: receiver, transmitter: transmitter, windows: windows, scores: scores))
            }
        }
        return (pairs, statistics)
    }

    struct TransmitterDay: Hashable {
        var transmitter: String
        var day: UTCDay
    }

    /// One receiver's sightings, in time order, cut into scans and written to a new contact log as
    /// the scanner writes its windows.
    static func log(
        _ heard: [RecordedSighting], into data: DataDirectory, keys: ReplayKeys, rssiCorrection: Int
    ) async throws -> (scans: Int, aggregates: Int) {
        guard let first = heard.first else { return (0, 0) }
        let clock = ReplayClock(first.time)
        let quiet = Logger(label: "gaend.replay", factory: { _ in SwiftLogNoOpLogHandler() })
        // Retention far beyond the recording: the log must keep every day it is given.
        let writer = try ContactLogWriter(dataDirectory: data, clock: clock, policy: .kernelDecides, retentionDays: 36_500, logger: quiet)
        var scans = 0
        var aggregates = 0
        var scan = ScanWindowAggregator(start: first.time, previousScanEnd: nil, rssiCorrection: rssiCorrection)
        var last = first.time
        func close() async throws {
            let (record, folded) = scan.finish(end: last, monotonicMilliseconds: UInt32(clamping: last.milliseconds - scan.start.milliseconds))
            clock.set(last)
            aggregates += try await writer.append(window: record, aggregates: folded)
            scans += 1
        }
        for sighting in heard {
            if sighting.time.milliseconds - last.milliseconds > scanGapMilliseconds {
                try await close()
                scan = ScanWindowAggregator(start: sighting.time, previousScanEnd: last, rssiCorrection: rssiCorrection)
            }
            if let payload = keys.payload(transmitter: sighting.transmitter, at: sighting.time) {
                scan.add(rpi: payload.rpi, aem: payload.aem, rssi: sighting.rssi, at: sighting.time)
            }
            last = sighting.time
        }
        try await close()
        try await writer.sync()
        return (scans, aggregates)
    }
}
