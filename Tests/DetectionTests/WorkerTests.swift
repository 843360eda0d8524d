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
import Synchronization
import Testing

/// A transport that never answers until cancelled, and says when it was called.
final class HangingTransport: HTTPTransport {
    let called = Mutex(0)
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        called.withLock { $0 += 1 }
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        throw .transport(url: request.url, reason: "cancelled")
    }
}

final class RecordingObserver: DetectionObserver {
    let outcomes = Mutex<[DetectionOutcome]>([])
    let progress = Mutex((done: 0, total: 0))
    func detectionProgress(keysDone: Int, keysTotal: Int) { progress.withLock { $0 = (max($0.done, keysDone), keysTotal) } }
    func detectionFinished(_ outcome: DetectionOutcome) async { outcomes.withLock { $0.append(outcome) } }
    var count: Int { outcomes.withLock { $0.count } }
    var last: DetectionOutcome? { outcomes.withLock { $0.last } }
}

@Suite(.ownThreads) struct WorkerTests {
    let directory: TemporaryDirectory
    let data: DataDirectory
    let server: HTTPFixture
    let clock: ManualClock
    let signing: ECDSAPrivateKey
    let tek = Bytes16(words: (0xAAAA_BBBB_CCCC_DDDD, 0x1234_5678_9ABC_DEF0))

    init() throws {
        // The same directory, server, key and clock as the wearer's fixture (two days after the
        // vectors' day, noon).
        let wearer = try WearerFixture()
        (directory, data, server, clock, signing) = (wearer.directory, wearer.data, wearer.server, wearer.clock, wearer.signing)
    }

    /// A log with two scans of the key on the vectors' day, and a server whose index lists one
    /// signed file holding that key.
    @discardableResult func prepare() async throws -> [UInt8] {
        let crypto = try ExposureKeyCrypto()
        let (rpik, aemk) = crypto.keys(for: tek)
        let writer = try ContactLogWriter(dataDirectory: data, clock: clock, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let first = UnixTime.vectorDay.adding(seconds: 10 * 3600)
        for (offset, rssi) in [(Int64(0), Int8(-60)), (240, -70)] {
            let seen = first.adding(seconds: offset)
            let rpi = crypto.rpi(rpik: rpik, interval: ENIntervalNumber(containing: seen)!)
            var summary = RSSISummary()
            summary.add(rssi)
            try await writer.append(
                window: ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1,
                    previousScanEnd: nil, monotonicMilliseconds: 4000),
                aggregates: [
                    ContactAggregate(
                        rpi: rpi, aem: crypto.aem(for: .version1_1(txPower: 8, calibrationConfidence: .low), aemk: aemk, rpi: rpi),
                        firstSeen: seen, lastSeen: seen, reports: 1, rssi: summary, previousScanEnd: seen.adding(seconds: -250))
                ])
        }
        let key = DiagnosisKey(
            key: try TemporaryExposureKey(keyData: tek, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_642_976)),
            transmissionRiskLevel: 4, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: 0)
        let zip = try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(KeyExport(region: "US", keys: [key]))
        try await server.set([
            "/index.txt": .text("US/1.zip"),
            "/US/1.zip": HTTPFixture.Route(body: zip),
        ])
        return zip
    }

    func worker(
        transport: any HTTPTransport = CurlTransport(), timer: any Clock<Duration> = TestClock(),
        deadline: any Clock<Duration> = TestClock(), observer: RecordingObserver? = nil,
        settings: DetectionWorker.Settings = DetectionWorker.Settings(), configurationURL: String? = nil, trustedPEM: String? = nil
    ) throws -> DetectionWorker {
        var downloader = KeyFileDownloader(
            indexURL: server.baseURL + "/index.txt", baseURL: server.baseURL, transport: transport, retryClock: RecordingClock())
        downloader.attempts = 1
        var v2 = V2Configuration()
        v2.infectiousnessForDaysSinceOnset = [0: .standard]
        return DetectionWorker(
            dataDirectory: data, downloader: downloader,
            policy: SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: trustedPEM ?? signing.publicKeyPEM)]),
            defaultConfiguration: ExposureConfiguration(v2: v2), clock: clock, timerClock: timer, deadlineClock: deadline, observer: observer,
            settings: settings, configurationURL: configurationURL,
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func theHealthAuthoritysConfigurationIsFetchedAndTheLastGoodOneKept() async throws {
        try await prepare()
        let url = server.baseURL + "/configuration.json"
        let halves =
            #"{"immediateDurationWeight":50,"nearDurationWeight":50,"mediumDurationWeight":50,"otherDurationWeight":50,"infectiousnessForDaysSinceOnsetOfSymptoms":{"0":1}}"#
        try await server.set(["/configuration.json": .text(halves)])
        let first = try await worker(configurationURL: url).runNow()
        // The served weights (50 %), not the worker's own (100 %): 300 of 600 seconds.
        #expect(first.dailySummaries.first?.total.weightedDurationSum == 300)

        // The server is gone: a new worker (a restart) still scores with the last one fetched.
        try await server.set(["/configuration.json": HTTPFixture.Route(status: 503, body: [])])
        try FileManager.default.removeItem(atPath: data.path(of: "processed-key-files"))
        let restarted = try worker(configurationURL: url)
        #expect(await restarted.store.configuration.v2?.bucketWeights == [50, 50, 50, 50])
        let second = try await restarted.runNow()
        #expect(second.dailySummaries.first?.total.weightedDurationSum == 300)

        // Something that is not a configuration fails the run, naming the URL and the key.
        try await server.set(["/configuration.json": .text(#"{"immediateDurationWieght":50}"#)])
        await #expect {
            try await restarted.runNow()
        } throws: { error in
            "\(error)".contains(url) && "\(error)".contains("immediateDurationWieght")
        }
        #expect(await restarted.store.state.lastError?.contains("immediateDurationWieght") == true)

        // What an authority serves is read as it serves it: Koronavilkku's answer, its rule with it.
        let served = try #require(Bundle.module.url(forResource: "koronavilkku-v2.json", withExtension: nil, subdirectory: "Fixtures/configurations"))
        try await server.set(["/configuration.json": HTTPFixture.Route(body: [UInt8](try Data(contentsOf: served)))])
        try FileManager.default.removeItem(atPath: data.path(of: "processed-key-files"))
        _ = try await restarted.runNow()
        #expect(await restarted.store.configuration.format == .googleDailySummaries)
        #expect(await restarted.store.configuration.rule == .minimumDailyScore(900))
    }

    /// Issue 40, item 1: a second run asked for while the first waits for the authority's
    /// configuration is refused (Manager1 answers InProgress); the two never share the spool, so
    /// the first finds its exposure and its file is processed with it.
    @Test func aSecondRunWhileTheFirstFetchesItsConfigurationIsRefused() async throws {
        try await prepare()
        let url = server.baseURL + "/configuration.json"
        let weights =
            #"{"immediateDurationWeight":100,"nearDurationWeight":100,"mediumDurationWeight":100,"otherDurationWeight":100,"infectiousnessForDaysSinceOnsetOfSymptoms":{"0":1}}"#
        try await server.set(["/configuration.json": HTTPFixture.Route(body: Array(weights.utf8), held: true)])
        let worker = try worker(configurationURL: url)
        let first = Task { try await worker.runNow() }
        try await eventually("the first run asked for the configuration") {
            try await server.requests().contains { $0.path == "/configuration.json" }
        }
        await #expect {
            try await worker.runNow()
        } throws: { error in
            if case .busy? = error as? DetectionWorkerError { return true }
            return false
        }
        #expect(try await server.requests().filter { $0.path == "/configuration.json" }.count == 1)
        try await server.release("/configuration.json")
        let result = try await first.value
        #expect(result.exposureDays.count == 1)
        #expect(await worker.store.results.results.count == 1)
        // Afterwards runs are taken again.
        _ = try await worker.runNow()
    }

    @Test func withoutAnyConfigurationFetchedAnUnreachableServerFailsTheRun() async throws {
        try await prepare()
        let url = server.baseURL + "/configuration.json"
        try await server.set(["/configuration.json": HTTPFixture.Route(status: 404, body: [])])
        await #expect {
            try await worker(configurationURL: url).runNow()
        } throws: { error in
            guard case .configurationDownload(let cause)? = error as? DetectionWorkerError else { return false }
            return "\(cause)".contains(url)
        }
    }

    @Test func aRunDownloadsMatchesStoresAndTells() async throws {
        try await prepare()
        let observer = RecordingObserver()
        let worker = try worker(observer: observer)
        let result = try await worker.runNow()
        #expect(result.windows.count == 1)
        #expect(result.windows[0].scanInstances.map(\.typicalAttenuation) == [68, 78])
        // 68 dB (near) and 78 dB (medium), five minutes each since the previous scan, all weights 100 %.
        #expect(result.dailySummaries.first?.total.weightedDurationSum == 600)
        #expect(observer.count == 1)
        #expect(observer.last?.exposed == true)
        #expect(observer.progress.withLock { $0 } == (done: 1, total: 1))
        #expect(await worker.store.current().answer.days == [UTCDay(daysSinceEpoch: ISO8601.parseDate("2020-04-02") ?? 0)])

        // Stored: the state survives a new worker, the file is processed, the windows re-score.
        let state = DetectionState.load(from: data)
        #expect(state.lastDetection == clock.now())
        #expect(state.lastError == nil)
        #expect(ExposureResults.load(from: data, now: UnixTime(seconds: 0)).results.results.count == 1)
        let again = try self.worker()
        var heavier = V2Configuration()
        heavier.infectiousnessForDaysSinceOnset = [0: .standard]
        heavier.bucketWeights = [200, 200, 200, 200]
        #expect(await again.store.rescore(ExposureConfiguration(v2: heavier)).dailySummaries.first?.total.weightedDurationSum == 1200)
        let second = try await again.runNow()
        #expect(second.files.isEmpty)  // nothing new to download
        #expect(try AtomicFile.mode(of: data.path(of: "detection-state.json")) == 0o600)
    }

    @Test func theBudgetAllowsSixV2RunsAndSaysWhenTheNextIs() async throws {
        try await prepare()
        let worker = try worker()
        for _ in 0..<6 {
            try await worker.runNow()
            clock.advance(seconds: 600)
        }
        await #expect(throws: DetectionWorkerError.rateLimited(nextAllowed: UnixTime.vectorDay.adding(seconds: 3 * 86_400 + 12 * 3600))) {
            try await worker.runNow()
        }
        // A restart does not reset the count; v1 mode has 20.
        let restarted = try self.worker()
        await #expect(throws: DetectionWorkerError.self) { try await restarted.runNow() }
        var v1 = V1Configuration()
        v1.minimumRiskScore = 1
        // (The file was matched before; the v1 summary is of the stored result.)
        #expect(try await restarted.runNow(configuration: ExposureConfiguration(v1: v1)).v1Summary?.matchedKeyCount == 1)
        // A day after the first run, v2 runs are allowed again.
        clock.advance(seconds: 86_400)
        try await restarted.runNow()
    }

    @Test func aFailedRunGivesItsBudgetBackAndMarksNothing() async throws {
        try await prepare()
        try await server.set(["/US/1.zip": .text("unavailable", status: 500)])
        let observer = RecordingObserver()
        let worker = try worker(observer: observer)
        for _ in 0..<10 {
            await #expect(throws: DetectionWorkerError.self) { try await worker.runNow() }
        }
        #expect(DetectionBudget(dataDirectory: data).load(now: clock.now()).isEmpty)
        #expect(DetectionState.load(from: data).lastError?.contains("HTTP 500") == true)
        #expect(observer.last?.error != nil)
        // The server recovers: the same file is downloaded and matched.
        try await prepare()
        #expect(try await worker.runNow().windows.count == 1)
        #expect(DetectionState.load(from: data).lastError == nil)
    }

    @Test func aRunPastItsDeadlineIsCancelledAndRecorded() async throws {
        try await prepare()
        let transport = HangingTransport()
        var settings = DetectionWorker.Settings()
        settings.deadline = .seconds(900)
        // The deadline "passes" at once: the clock's sleep returns immediately, the transport never does.
        let worker = try worker(transport: transport, deadline: RecordingClock(), settings: settings)
        await #expect(throws: DetectionWorkerError.deadlineExceeded(after: .seconds(900))) { try await worker.runNow() }
        #expect(DetectionBudget(dataDirectory: data).load(now: clock.now()).isEmpty)
        #expect(DetectionState.load(from: data).lastError?.contains("did not finish within") == true)
    }

    @Test func runsNeverOverlap() async throws {
        try await prepare()
        let transport = HangingTransport()
        let worker = try worker(transport: transport)
        let first = Task { try await worker.runNow() }
        while transport.called.withLock({ $0 }) == 0 { await Task.yield() }
        await #expect(throws: DetectionWorkerError.busy) { try await worker.runNow() }
        first.cancel()
        _ = await first.result
        // The cancelled run gave its budget back.
        #expect(DetectionBudget(dataDirectory: data).load(now: clock.now()).isEmpty)
    }

    @Test func theTimerRunsEveryIntervalWithJitter() async throws {
        try await prepare()
        let observer = RecordingObserver()
        let sleeper = RecordingClock(limit: 3)
        let worker = try worker(timer: sleeper, observer: observer)
        await worker.runOnTimer()
        // Three delays slept, three runs; the fourth sleep ended the timer.
        #expect(observer.count == 3)
        let timerDelays = sleeper.recorded
        #expect(timerDelays.count == 4)
        #expect(timerDelays.allSatisfy { $0 >= .seconds(4 * 3600 - 900) && $0 <= .seconds(4 * 3600 + 900) })
        #expect(DetectionState.load(from: data).nextDetection != nil)
    }

    /// Issue 46: a file signed by a key gaend does not trust (an authority's rotated key, a typo in
    /// `export-key`) and an archive that is not one are refused by name: the run says so in
    /// LastDetectionError and to its observer, marks neither processed, and once the right key is
    /// trusted the next run matches the file; the invalid one is refused at every run.
    @Test func refusedFilesAreToldAndTriedAgainOnceTheKeyIsFixed() async throws {
        let zip = try await prepare()
        try await server.set([
            "/index.txt": .text("US/1.zip\nUS/2.zip"), "/US/1.zip": HTTPFixture.Route(body: zip),
            "/US/2.zip": HTTPFixture.Route(body: Array("PK\u{3}\u{4} not an archive".utf8)),
        ])
        let observer = RecordingObserver()
        let otherKey = try ECDSAPrivateKey().publicKeyPEM
        let wrong = try worker(observer: observer, trustedPEM: otherKey)
        let refused = try await wrong.runNow()
        #expect(refused.windows.isEmpty)
        let refusals = try #require(refused.refusals)
        #expect(refusals.refused.map(\.verdict.name) == ["bad-signature", "invalid"])
        let text = "\(refusals)"
        #expect(text.hasPrefix("2 of 2 key files refused: bad-signature ("), "\(text)")
        #expect(text.hasSuffix("/US/2.zip); their keys were not checked"), "\(text)")
        #expect(DetectionState.load(from: data).lastError == text)
        #expect(observer.last?.problem == text)
        #expect(try ProcessedFilesStore(dataDirectory: data).load().isEmpty)

        // The key fixed: the signed file is downloaded again and matched; the invalid one is
        // refused again, by name.
        let fixed = try worker(observer: observer)
        let matched = try await fixed.runNow()
        #expect(matched.windows.count == 1)
        #expect(matched.files.map(\.verdict.name) == ["verified", "invalid"])
        #expect(DetectionState.load(from: data).lastError?.hasPrefix("1 of 2 key files refused: invalid (") == true)
        #expect(try ProcessedFilesStore(dataDirectory: data).load().keys.map { $0.hasSuffix("/US/1.zip") } == [true])

        // The server drops the invalid file: the next run is clean again.
        try await server.set(["/index.txt": .text("US/1.zip")])
        clock.advance(seconds: 600)
        let clean = try await fixed.runNow()
        #expect(clean.files.isEmpty && clean.refusals == nil)
        #expect(DetectionState.load(from: data).lastError == nil)
        #expect(observer.last?.problem == nil)
    }

    /// Text from a key server is quoted escaped: a file name with an escape sequence in it cannot
    /// reach a terminal through LastDetectionError.
    @Test func refusedNamesAreEscaped() throws {
        let outcome = KeyFileOutcome(name: "US/\u{1B}[2J\u{9B}x.zip", verdict: .invalid("not a zip archive"), keys: 0)
        let text = "\(try #require(KeyFileRefusals([outcome])))"
        #expect(text == "1 of 1 key file refused: invalid (US/\\u001b[2J\\u009bx.zip); their keys were not checked")
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }
}
