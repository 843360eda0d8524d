// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import Foundation
import KeyFiles
import Logging
import Storage
import SystemCalls

/// A crowded fortnight on disk: a data directory whose log holds `aggregates` synthetic aggregates
/// over 14 days (500 a window, 100,000 distinct RPIs, as `gaenctl tools log append --days 14
/// --per-window 500` writes them) and one planted exposure (one key heard 20 times, 4 minutes
/// apart, at −55 dBm from a key whose AEM says 0 dBm), and `keys` diagnosis keys of the same 14
/// days in signed files of at most 700,000 keys (the planted key in the first), with the public
/// key and a configuration under which the planted exposure counts.
///
/// What `gaen-bench busy-detection` measures and what the memory-limit process suites detect.
struct BusyFortnight {
    let root: String
    var data: String { root + "/data" }
    var publicKey: String { root + "/export.pem" }
    var configuration: String { root + "/config.json" }
    private(set) var keyFiles: [String] = []
    /// The day of the planted exposure: three days before the last day.
    let exposureDay: UTCDay

    static let keysPerFile = 700_000
    static let plantedTEK = Bytes16(words: (0x0102_0304_0506_0708, 0x090A_0B0C_0D0E_0F10))

    /// A fixture `busy-fixture` wrote into `root` for `keys` keys.
    init(existing root: String, keys: Int, lastDay: UTCDay) {
        self.root = root
        exposureDay = lastDay.advanced(by: -3)
        keyFiles = (0..<((keys + Self.keysPerFile - 1) / Self.keysPerFile)).map { root + "/keys-\($0 + 1).zip" }
    }

    /// Writes the fixture into `root` (made if missing). `lastDay` is the newest day of the log.
    init(root: String, aggregates: Int, keys: Int, lastDay: UTCDay, distinctRPIs: Int = 100_000, perWindow: Int = 500) async throws {
        self.root = root
        exposureDay = lastDay.advanced(by: -3)
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let writer = try ContactLogWriter(dataDirectory: DataDirectory(path: data), clock: SystemWallClock(), policy: .kernelDecides, logger: quiet)
        let synthetic = SyntheticContacts(
            seed: 1, distinctRPIs: max(distinctRPIs, perWindow), aggregatesPerWindow: perWindow, days: 14, lastDay: lastDay,
            totalAggregates: aggregates)
        for index in 0..<synthetic.windowCount {
            let (window, records) = synthetic.window(index)
            try await writer.append(window: window, aggregates: records)
        }
        let crypto = try ExposureKeyCrypto()
        let (rpik, aemk) = crypto.keys(for: Self.plantedTEK)
        let first = exposureDay.start.adding(seconds: 9 * 3600)
        for scan in 0..<20 {
            let seen = first.adding(seconds: Int64(scan) * 240)
            let rpi = crypto.rpi(rpik: rpik, interval: ENIntervalNumber(containing: seen)!)
            var rssi = RSSISummary()
            rssi.add(-55)
            let aggregate = ContactAggregate(
                rpi: rpi, aem: crypto.aem(for: .version1_1(txPower: 0, calibrationConfidence: .low), aemk: aemk, rpi: rpi), firstSeen: seen,
                lastSeen: seen.adding(seconds: 1), reports: 1, rssi: rssi, previousScanEnd: seen.adding(seconds: -236))
            try await writer.append(
                window: ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1,
                    previousScanEnd: seen.adding(seconds: -236), monotonicMilliseconds: 4000),
                aggregates: [aggregate])
        }
        try await writer.sync()

        let signing = try ECDSAPrivateKey()
        try signing.publicKeyPEM.write(toFile: publicKey, atomically: true, encoding: .utf8)
        let signer = KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1")
        var generator = SplitMix64(seed: 42)
        let firstDay = lastDay.advanced(by: -13)
        var remaining = keys
        var number = 0
        while remaining > 0 {
            let count = min(remaining, Self.keysPerFile)
            var batch = [DiagnosisKey]()
            batch.reserveCapacity(count)
            if number == 0 {
                batch.append(
                    DiagnosisKey(
                        key: try TemporaryExposureKey(keyData: Self.plantedTEK, rollingStartIntervalNumber: exposureDay.firstInterval!),
                        transmissionRiskLevel: 4, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: 0))
            }
            while batch.count < count {
                batch.append(
                    DiagnosisKey(
                        key: try TemporaryExposureKey(
                            keyData: Bytes16(words: (generator.next(), generator.next())),
                            rollingStartIntervalNumber: firstDay.advanced(by: Int64(generator.next() % 14)).firstInterval!),
                        transmissionRiskLevel: 4, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: 0))
            }
            let path = root + "/keys-\(number + 1).zip"
            let archive = try signer.archive(
                KeyExport(startTimestamp: UInt64(firstDay.start.seconds), endTimestamp: UInt64(lastDay.start.seconds + 86_400), region: "CH", keys: batch))
            try Data(archive).write(to: URL(fileURLWithPath: path))
            keyFiles.append(path)
            remaining -= count
            number += 1
        }
        // Swiss-like weights: the planted 20 sightings at 55 dB make 80 minutes of "immediate".
        try Data(
            #"""
            {"attenuationDurationThresholds": [50, 70, 90], "immediateDurationWeight": 100, "nearDurationWeight": 100,
             "mediumDurationWeight": 50, "otherDurationWeight": 0, "infectiousnessForDaysSinceOnsetOfSymptoms": {"0": 1},
             "reportTypeConfirmedTestWeight": 100}
            """#.utf8
        ).write(to: URL(fileURLWithPath: configuration))
    }
}
