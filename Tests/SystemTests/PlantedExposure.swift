// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Logging
import Storage
import Testing
import SystemCalls

/// An exposure planted for the process suites: five scans, 4 minutes apart, at −55 dBm from a key
/// whose AEM says 0 dBm (attenuation 55 dB, 240 s each: 20 minutes), written into a data
/// directory's contact log; and a key server on loopback whose one export holds that key, signed by
/// a key whose public PEM is written to `pemPath` (for `--export-key 310:v1:PEM`).
struct PlantedExposure {
    let server: HTTPFixture

    init(data: DataDirectory, pemPath: String, tek: Bytes16, day: UTCDay, region: String = "CH") async throws {
        let crypto = try ExposureKeyCrypto()
        let (rpik, aemk) = crypto.keys(for: tek)
        let writer = try ContactLogWriter(
            dataDirectory: data, clock: SystemWallClock(), logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let first = day.start.adding(seconds: 9 * 3600)
        for scan in 0..<5 {
            let seen = first.adding(seconds: Int64(scan) * 240)
            let rpi = crypto.rpi(rpik: rpik, interval: try #require(ENIntervalNumber(containing: seen)))
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
        let key = try TemporaryExposureKey(keyData: tek, rollingStartIntervalNumber: try #require(day.firstInterval))
        let zip = try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(
            KeyExport(
                startTimestamp: 1, endTimestamp: 2, region: region,
                keys: [DiagnosisKey(key: key, transmissionRiskLevel: 4, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: 0)]))
        server = try HTTPFixture()
        try await server.set(["/index.txt": .text("1.zip\n"), "/1.zip": HTTPFixture.Route(body: zip)])
        try signing.publicKeyPEM.write(toFile: pemPath, atomically: true, encoding: .utf8)
    }
}
