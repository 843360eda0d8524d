// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Storage
import Testing

/// The wearer's question answered over days, as GMS keeps results (docs/detection.md, "Results
/// across runs"): one result per key, kept across runs and restarts, aged out after 14 days.
@Suite(.ownThreads) struct ResultsAcrossRunsTests {
    let wearer: WearerFixture
    let day = UTCDay(containing: UnixTime.vectorDay)

    init() throws { wearer = try WearerFixture() }

    @Test func anExposureLastsAcrossRunsAndRestartsAndAgesOutAfterFourteenDays() async throws {
        try await wearer.plantSightings()
        try await wearer.serve([KeyExport(region: "US", keys: [WearerFixture.key()])])
        let worker = try wearer.worker()
        let first = try await worker.runNow()
        #expect(first.windows.count == 1)
        #expect(first.exposureDays == [day])
        #expect(first.lastExposure == UnixTime.vectorDay.adding(seconds: 10 * 3600))
        // The downloads' spool is emptied when the run ends.
        #expect(try wearer.data.subdirectory("downloads").entries().isEmpty)

        // The next run has no new file: the exposure is still the answer.
        wearer.clock.advance(seconds: 4 * 3600)
        let second = try await worker.runNow()
        #expect(second.files.isEmpty)
        #expect(second.windows.count == 1)
        #expect(second.exposureDays == [day])
        #expect(second.dailySummaries.map(\.day) == [day])

        // A restart reads it back.
        let restarted = try wearer.worker()
        #expect(await restarted.store.current().answer == ExposureAnswer(days: [day], lastExposure: first.lastExposure))
        #expect(await restarted.store.rescore().windows.count == 1)

        // Fourteen days after the day it is still shown; on the fifteenth it is gone, and a run
        // drops it from the file.
        wearer.clock.set(day.advanced(by: 14).start.adding(seconds: 23 * 3600))
        #expect(await restarted.store.current().answer.days == [day])
        wearer.clock.set(day.advanced(by: 15).start.adding(seconds: 3600))
        #expect(await restarted.store.current().answer == ExposureAnswer())
        #expect(await restarted.store.rescore().windows.isEmpty)
        let aged = try await restarted.runNow()
        #expect(aged.windows.isEmpty && aged.exposureDays.isEmpty)
        #expect(ExposureResults.load(from: wearer.data, now: wearer.clock.now()).results.isEmpty)
    }

    @Test func aKeyInTwoFilesOrTwiceInOneIsMatchedOnce() async throws {
        try await wearer.plantSightings()
        let key = WearerFixture.key()
        try await wearer.serve([KeyExport(region: "US", keys: [key, key]), KeyExport(region: "US", keys: [key])])
        let result = try await wearer.worker().runNow()
        #expect(result.windows.count == 1)
        #expect(result.statistics.newResults == 1)
        #expect(result.statistics.keysWithStoredResult == 1)
        #expect(result.dailySummaries.first?.total.weightedDurationSum == 600)
    }

    /// File 1 publishes `first`; file 2 revises it to `second` (in revised_keys).
    func revise(_ first: ReportType, to second: ReportType, weights: [ReportTypeKey: Double] = [:]) async throws -> DetectionResult {
        try await wearer.plantSightings()
        var configuration = WearerFixture.configuration
        for (type, weight) in weights { configuration.v2?.reportTypeWeights[type] = weight }
        try await wearer.serve([KeyExport(region: "US", keys: [WearerFixture.key(WearerFixture.heard, first)])])
        let worker = try wearer.worker(configuration: configuration)
        try await worker.runNow()
        try await wearer.serve([
            KeyExport(region: "US", keys: [WearerFixture.key(WearerFixture.heard, first)]),
            KeyExport(region: "US", revisedKeys: [WearerFixture.key(WearerFixture.heard, second)]),
        ])
        return try await worker.runNow()
    }

    @Test func aSelfReportConfirmedByTestIsRelabelledAndRescored() async throws {
        let result = try await revise(.selfReport, to: .confirmedTest, weights: [.selfReport: 50, .confirmedTest: 100])
        #expect(result.statistics.revisions == 1)
        #expect(result.windows.map(\.reportType) == [.confirmedTest])
        // 600 weighted seconds at 100 % instead of 50 %.
        #expect(result.dailySummaries.first?.total.scoreSum == 600)
        #expect(result.dailySummaries.first?.byReportType[.confirmedTest]?.scoreSum == 600)
        #expect(result.dailySummaries.first?.byReportType[.selfReport] == nil)
    }

    @Test func aClinicalDiagnosisRevokedLeavesTheSummaries() async throws {
        let result = try await revise(.confirmedClinicalDiagnosis, to: .revoked)
        #expect(result.windows.map(\.reportType) == [.revoked])
        #expect(result.dailySummaries.isEmpty)
        #expect(result.exposureDays.isEmpty)
    }

    /// GMS's `isValidTransition` has no transition out of CONFIRMED_TEST: its revocation is not
    /// applied, and the exposure stays.
    @Test func aConfirmedTestIsNotRevisedAsGMSAllowsNoTransitionFromIt() async throws {
        let result = try await revise(.confirmedTest, to: .revoked)
        #expect(result.statistics.revisions == 0)
        #expect(result.windows.map(\.reportType) == [.confirmedTest])
        #expect(result.exposureDays == [day])
    }

    @Test func aKeyIsRevisedOnceAtMost() async throws {
        try await wearer.plantSightings()
        try await wearer.serve([
            KeyExport(region: "US", keys: [WearerFixture.key(WearerFixture.heard, .selfReport)]),
            KeyExport(region: "US", revisedKeys: [WearerFixture.key(WearerFixture.heard, .confirmedClinicalDiagnosis)]),
            KeyExport(region: "US", revisedKeys: [WearerFixture.key(WearerFixture.heard, .revoked)]),
        ])
        let result = try await wearer.worker().runNow()
        #expect(result.statistics.revisions == 1)
        #expect(result.windows.map(\.reportType) == [.confirmedClinicalDiagnosis])
    }

    @Test func revisedKeysAreNeverMatchedAsNewKeys() async throws {
        try await wearer.plantSightings()
        try await wearer.serve([KeyExport(region: "US", revisedKeys: [WearerFixture.key(WearerFixture.heard, .confirmedTest)])])
        let result = try await wearer.worker().runNow()
        #expect(result.windows.isEmpty)
        #expect(result.statistics.revisedKeysWithoutResult == 1)
    }

    @Test func aKeyWithDaysSinceOnsetOutsideFourteenMatchesWithTheMissingInfectiousness() async throws {
        try await wearer.plantSightings()
        try await wearer.serve([KeyExport(region: "US", keys: [WearerFixture.key(WearerFixture.heard, .confirmedTest, days: 20)])])
        let result = try await wearer.worker().runNow()
        #expect(result.windows.map(\.infectiousness) == [.high])
        #expect(result.exposureDays == [day])
    }

    /// GMS SignatureVerifier: every file of a batch must be there; until then none is matched,
    /// and none is marked processed, so they are matched when the rest arrives.
    @Test func aMultiFileBatchIsMatchedOnlyWhenComplete() async throws {
        try await wearer.plantSightings()
        let first = KeyExport(startTimestamp: 100, endTimestamp: 200, region: "US", batchNumber: 1, batchSize: 2, keys: [WearerFixture.key()])
        let second = KeyExport(
            startTimestamp: 100, endTimestamp: 200, region: "US", batchNumber: 2, batchSize: 2, keys: [WearerFixture.key(WearerFixture.alsoHeard)])
        try await wearer.serve([first])
        let worker = try wearer.worker()
        let partial = try await worker.runNow()
        #expect(partial.windows.isEmpty)
        #expect(partial.files.map(\.verdict.name) == ["invalid"])
        #expect(partial.files.first?.verdict.reason?.contains("2 of the batch") == true, "\(partial.files)")
        try await wearer.serve([first, second])
        let whole = try await worker.runNow()
        #expect(whole.files.map(\.verdict.name) == ["verified", "verified"])
        #expect(whole.windows.count == 2)
    }

    @Test func aStoredResultThatDoesNotReadBackNeverStopsTheWorker() async throws {
        _ = try wearer.data.prepare()
        let path = ExposureResults.path(in: wearer.data)
        try AtomicFile.write(Array("{\"format\": 1, \"results\": [".utf8), to: path)
        let worker = try wearer.worker()
        #expect(await worker.store.results.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path))
        let aside = try FileManager.default.contentsOfDirectory(atPath: wearer.data.path).filter { $0.hasPrefix("exposure-results.json.damaged-") }
        #expect(aside.count == 1)
        #expect(await worker.store.current().resultsRebuilding)
        // One bad result among good ones is left out; the others stay.
        try await wearer.plantSightings()
        try await wearer.serve([KeyExport(region: "US", keys: [WearerFixture.key(), WearerFixture.key(WearerFixture.alsoHeard)])])
        try await worker.runNow()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let damaged = text.replacingOccurrences(of: "\"rssi_valid\":1", with: "\"rssi_valid\":-1", options: [], range: text.range(of: "\"rssi_valid\":1"))
        try AtomicFile.write(Array(damaged.utf8), to: path)
        let loaded = ExposureResults.load(from: wearer.data, now: wearer.clock.now())
        #expect(loaded.results.results.count == 1)
        #expect(loaded.problem?.contains("1 stored result(s) did not read back") == true)
    }

    /// The previous format kept the last run's windows in detection-state.json; they stay shown
    /// after the upgrade until they age out, and survive the next save of the state file.
    @Test func windowsOfThePreviousStateFormatAreKept() async throws {
        _ = try wearer.data.prepare()
        let window =
            #"[{"day":"2020-04-03","report_type":"confirmed-test","infectiousness":"standard","calibration_confidence":"low","scan_instances":[{"typical_attenuation":60,"minimum_attenuation":58,"seconds_since_last_scan":300}]}]"#
        let old = JSONValue.object([
            ("last_detection", .int(UnixTime.vectorDay.adding(seconds: 86_400).seconds)), ("last_error", .null), ("next_detection", .null),
            ("last_result", .string("{}")), ("windows", .string(window)),
        ])
        try AtomicFile.write(Array(old.serialized().utf8), to: wearer.data.path(of: "detection-state.json"))
        let worker = try wearer.worker()
        #expect(await worker.store.state.lastDetection == UnixTime.vectorDay.adding(seconds: 86_400))
        #expect(await worker.store.current().answer.days == [day.advanced(by: 1)])
        try await wearer.serve([])
        try await worker.runNow()
        #expect(DetectionState.load(from: wearer.data).lastDetection == wearer.clock.now())
        let restarted = try wearer.worker()
        #expect(await restarted.store.rescore().windows.map(\.day) == [day.advanced(by: 1)])
        #expect(await restarted.store.rescore().dailySummaries.first?.total.weightedDurationSum == 300)
    }

    @Test func theNextDetectionTimeIsWhenTheBudgetAllowsIt() async throws {
        try await wearer.plantSightings()
        try await wearer.serve([])
        let sleeper = RecordingClock(limit: 0)
        let worker = try wearer.worker(timer: sleeper)
        let start = wearer.clock.now()
        for _ in 0..<6 {
            try await worker.runNow()
            wearer.clock.advance(seconds: 600)
        }
        // The timer wanted to run in about 4 hours; the budget allows the next run 24 hours after
        // the first, and that is when the timer sleeps until and what the property shows.
        await worker.runOnTimer()
        let allowed = start.adding(seconds: 86_400)
        #expect(await worker.store.current().nextDetection == allowed)
        #expect(sleeper.recorded == [.seconds(allowed.seconds - wearer.clock.now().seconds)])
    }
}
