// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Detection
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Logging
import Storage

/// A wearer's days, for tests that span runs, restarts and weeks: a data directory whose contact
/// log heard two keys (real RPIs and AEMs), a key server serving signed files, a clock to advance
/// and workers to start and restart over the same directory.
struct WearerFixture {
    let directory: TemporaryDirectory
    let data: DataDirectory
    let server: HTTPFixture
    let clock: ManualClock
    let signing: ECDSAPrivateKey
    /// Heard on the vectors' day at 10:00 and 10:04 (RSSI −60, −70; TX power 8 dBm).
    static let heard = Bytes16(words: (0xAAAA_BBBB_CCCC_DDDD, 0x1234_5678_9ABC_DEF0))
    /// Heard on the same day at 15:00 (RSSI −65).
    static let alsoHeard = Bytes16(words: (0x1111_2222_3333_4444, 0x5555_6666_7777_8888))
    static let keyStart = ENIntervalNumber(rawValue: 2_642_976)

    init() throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.path + "/gaend")
        server = try HTTPFixture()
        signing = try ECDSAPrivateKey()
        // Two days after the vectors' day, noon.
        clock = ManualClock(UnixTime.vectorDay.adding(seconds: 2 * 86_400 + 12 * 3600))
    }

    /// Writes the scans of both keys to the contact log.
    func plantSightings() async throws {
        let crypto = try ExposureKeyCrypto()
        let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
        let writer = try ContactLogWriter(dataDirectory: data, clock: clock, logger: quiet)
        let day = UnixTime.vectorDay
        let scans: [(Bytes16, Int64, Int8)] = [(Self.heard, 10 * 3600, -60), (Self.heard, 10 * 3600 + 240, -70), (Self.alsoHeard, 15 * 3600, -65)]
        for (tek, offset, rssi) in scans {
            let (rpik, aemk) = crypto.keys(for: tek)
            let seen = day.adding(seconds: offset)
            let rpi = crypto.rpi(rpik: rpik, interval: ENIntervalNumber(containing: seen)!)
            var summary = RSSISummary()
            summary.add(rssi)
            let aem = crypto.aem(for: .version1_1(txPower: 8, calibrationConfidence: .low), aemk: aemk, rpi: rpi)
            try await writer.append(
                window: ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1,
                    previousScanEnd: seen.adding(seconds: -250), monotonicMilliseconds: 4000),
                aggregates: [
                    ContactAggregate(
                        rpi: rpi, aem: aem, firstSeen: seen, lastSeen: seen, reports: 1, rssi: summary, previousScanEnd: seen.adding(seconds: -250))
                ])
        }
    }

    static func key(_ data: Bytes16 = heard, _ type: ReportType = .confirmedTest, days: Int32? = 0) -> DiagnosisKey {
        DiagnosisKey(
            key: try! TemporaryExposureKey(keyData: data, rollingStartIntervalNumber: keyStart), transmissionRiskLevel: 4, reportType: type,
            daysSinceOnsetOfSymptoms: days)
    }

    /// Serves `exports` as `1.zip`, `2.zip`… listed in the index, in order, signed by the trusted key.
    func serve(_ exports: [KeyExport]) async throws {
        var routes = [String: HTTPFixture.Route]()
        var lines = [String]()
        for (number, export) in exports.enumerated() {
            let name = "US/\(number + 1).zip"
            lines.append(name)
            routes["/" + name] = HTTPFixture.Route(body: try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(export))
        }
        routes["/index.txt"] = .text(lines.joined(separator: "\n"))
        try await server.set(routes)
    }

    /// The v2 configuration of these tests: day 0 standard, missing days high, all weights 100 %.
    static var configuration: ExposureConfiguration {
        var v2 = V2Configuration()
        v2.infectiousnessForDaysSinceOnset = [0: .standard]
        v2.infectiousnessWhenDaysSinceOnsetMissing = .high
        return ExposureConfiguration(v2: v2)
    }

    /// A worker over the directory, as a (re)started daemon would make it.
    func worker(configuration: ExposureConfiguration = Self.configuration, timer: any Clock<Duration> = TestClock()) throws -> DetectionWorker {
        var downloader = KeyFileDownloader(
            indexURL: server.baseURL + "/index.txt", baseURL: server.baseURL, transport: CurlTransport(),
            retryClock: RecordingClock())
        downloader.attempts = 1
        return DetectionWorker(
            dataDirectory: data, downloader: downloader,
            policy: SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)]),
            defaultConfiguration: configuration, clock: clock, timerClock: timer, deadlineClock: TestClock(),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}
