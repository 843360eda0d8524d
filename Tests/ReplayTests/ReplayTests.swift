// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Replay
import Storage
import Testing

/// A hand-made recording whose windows are computed by hand from GMS's rules (docs/detection.md):
/// receiver R1 hears T in four scans (one across T's RPI rotation at 10:10) and U once between, so
/// R1's previous scan is U's for one of T's scans; R2 hears T twice. TX power −24 dBm, RSSI
/// correction +5 dB: attenuation = −29 − rssi.
@Suite(.ownThreads) struct ReplayTests {
    static let day = UTCDay(parsing: "2026-11-20")!

    /// Seconds since the epoch of `hh:mm:ss.fff` on `day`.
    static func at(_ hours: Int64, _ minutes: Int64, _ seconds: Double) -> String {
        String(format: "%.3f", Double(day.start.seconds + hours * 3600 + minutes * 60) + seconds)
    }

    static let csv = """
        time,receiver,transmitter,rssi,distance
        \(at(10, 1, 30)),R1,T,-80,1.2
        \(at(10, 1, 31)),R1,T,-82,
        \(at(10, 3, 0)),R1,U,-95,6.5
        \(at(10, 5, 30.5)),R1,T,-70,0.8
        \(at(10, 9, 58)),R1,T,-60,0.5
        \(at(10, 10, 2)),R1,T,-64,0.5
        \(at(10, 45, 0)),R1,T,-90,3.0
        \(at(10, 2, 0)),R2,T,-66,1.0
        \(at(10, 6, 0)),R2,T,-66,1.0
        """

    static func instance(_ typical: Int, _ minimum: Int, _ seconds: Int) -> ScanInstance {
        ScanInstance(typicalAttenuation: typical, minimumAttenuation: minimum, secondsSinceLastScan: seconds)
    }

    static func replay(_ csv: String = csv, configuration: ExposureConfiguration = ExposureConfiguration(v2: V2Configuration())) async throws
        -> (pairs: [ReplayPair], statistics: ReplayStatistics)
    {
        let scratch = try TemporaryDirectory()
        let rows = try SightingsFile.read(Data(csv.utf8))
        return try await TraceReplay(settings: TraceReplay.Settings(configuration: configuration), scratch: URL(fileURLWithPath: scratch.path)).run(rows)
    }

    @Test func theHandComputedWindowsComeOut() async throws {
        let (pairs, statistics) = try await Self.replay()
        #expect(pairs.map { "\($0.receiver)>\($0.transmitter)" } == ["R1>T", "R1>U", "R2>T"])
        let windows = pairs.map { $0.windows.map(\.scanInstances) }
        // R1 hears T: 10:01:30 and :31 are one aggregate (−75, −77 corrected: 52 typical, 51
        // minimum), the first scan (120 s); 10:05:30 after U's scan at 10:03 (2 minutes: 120 s);
        // 10:09:58 and 10:10:02, two RPIs in one scan instance (31 and 35: 33, minimum 31), 4
        // minutes after; 10:45, more than 1,800 s after the window's start: a second window, 35
        // minutes after the last scan, counted as 5 (300 s).
        #expect(windows[0] == [[Self.instance(52, 51, 120), Self.instance(41, 41, 120), Self.instance(33, 31, 240)], [Self.instance(61, 61, 300)]])
        // R1 hears U at 10:03, two minutes after its first scan ended at 10:01:31.
        #expect(windows[1] == [[Self.instance(66, 66, 120)]])
        // R2: the first scan it ever made (120 s), then 4 minutes later.
        #expect(windows[2] == [[Self.instance(37, 37, 120), Self.instance(37, 37, 240)]])
        for pair in pairs {
            #expect(pair.windows.allSatisfy { $0.day == Self.day && $0.reportType == .confirmedTest && $0.infectiousness == .standard })
            #expect(pair.windows.allSatisfy { $0.calibrationConfidence == .lowest })
        }
        #expect(statistics.rows == 9 && statistics.receivers == 2 && statistics.transmitters == 2)
        #expect(statistics.scans == 7 && statistics.aggregates == 8)
        #expect(statistics.keys == 2 && statistics.matchedKeys == 3 && statistics.windows == 4)
        #expect(statistics.pairsHeard == 3 && statistics.pairsExposed == 3)
    }

    /// The verdict is the configuration's: SwissCovid's 15 minutes are reached by no pair (R1 hears
    /// T 8 low minutes and 5 medium ones, 10.5 weighted; R2 6 low ones); 10 minutes by R1's alone.
    @Test func theVerdictIsTheConfigurations() async throws {
        let swiss = try ExposureConfiguration(json: Data(#"{"lowerThreshold": 55, "higherThreshold": 63, "factorHigh": 0.5, "triggerThreshold": 15}"#.utf8))
        let (pairs, statistics) = try await Self.replay(configuration: swiss)
        #expect(statistics.pairsExposed == 0)
        #expect(pairs.first?.scores.perDay.map(\.lowMinutes) == [8] && pairs.first?.scores.perDay.map(\.mediumMinutes) == [5])
        let lower = try ExposureConfiguration(json: Data(#"{"lowerThreshold": 55, "higherThreshold": 63, "factorHigh": 0.5, "triggerThreshold": 10}"#.utf8))
        let (again, _) = try await Self.replay(configuration: lower)
        #expect(again.filter(\.scores.verdict.exposed).map { "\($0.receiver)>\($0.transmitter)" } == ["R1>T"])
    }

    static let refusals: [(String, String)] = [
        ("", "empty: no header"),
        ("when,who,whom,rssi\n", "line 1: the header is not time,receiver,transmitter,rssi[,distance]"),
        ("time,receiver,transmitter,rssi\n1.5,A,B\n", "line 2: 3 fields, expected 4"),
        ("time,receiver,transmitter,rssi\n1.5,A,B,-60\nsoon,A,B,-60\n", "line 3: time 'soon' is not unix seconds"),
        ("time,receiver,transmitter,rssi\n-1,A,B,-60\n", "line 2: time '-1' is not unix seconds"),
        ("time,receiver,transmitter,rssi\n1.5,A,B,127\n", "line 2: rssi '127' is not dBm in -128...126"),
        ("time,receiver,transmitter,rssi\n1.5,A,B,-60.5\n", "line 2: rssi '-60.5' is not dBm"),
        ("time,receiver,transmitter,rssi\n1.5,A,A,-60\n", "line 2: receiver and transmitter are both 'A'"),
        ("time,receiver,transmitter,rssi\n1.5,A B,C,-60\n", "line 2: receiver 'A B' is not an id"),
        ("time,receiver,transmitter,rssi,distance\n1.5,A,B,-60,-2\n", "line 2: distance '-2' is not metres"),
    ]

    @Test(arguments: refusals)
    func aBadRowIsNamedByItsLine(csv: String, message: String) {
        #expect {
            _ = try SightingsFile.read(Data(csv.utf8))
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func rowsReadWithTheirFraction() throws {
        let rows = try SightingsFile.read(Data("time,receiver,transmitter,rssi\r\n1596118017.777111,4,2,-88\r\n\r\n".utf8))
        #expect(rows == [RecordedSighting(time: UnixTime(milliseconds: 1_596_118_017_777), receiver: "4", transmitter: "2", rssi: -88)])
    }
}

/// DP-3T's experiment 34, office scenario (`../shared/traces/dp3t-exp34`, converted at run time):
/// replayed through gaend under SwissCovid's served configuration, the figures `gaen-bench traces`
/// prints for it.
@Suite(.ownThreads) struct ExperimentReplayTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/traces/dp3t-exp34").path

    @Test func theOfficeScenarioUnderSwissCovidsRule() async throws {
        guard FileManager.default.fileExists(atPath: Self.folder + "/scenario03-office.sqlite") else {
            print("ExperimentReplayTests: skipped: \(Self.folder) is absent")
            return
        }
        let rows = try ExperimentTraces.sightings(scenario: "03-office", in: Self.folder)
        #expect(rows.count == 6_309)
        let swissCovid = try ExposureConfiguration(
            json: Data(#"{"lowerThreshold":55,"higherThreshold":63,"factorLow":1.0,"factorHigh":0.5,"triggerThreshold":15}"#.utf8))
        let scratch = try TemporaryDirectory()
        let (pairs, statistics) = try await TraceReplay(
            settings: TraceReplay.Settings(configuration: swissCovid), scratch: URL(fileURLWithPath: scratch.path)
        ).run(rows)
        #expect(statistics.receivers == 18 && statistics.transmitters == 18)
        #expect(statistics.scans == 114 && statistics.windows == 294 && statistics.pairsHeard == 294)
        #expect(statistics.pairsExposed == 30)
        // Every notified pair has at least 15 weighted minutes on the day, rounded up per bucket.
        for pair in pairs where pair.scores.verdict.exposed {
            #expect(pair.scores.perDay.allSatisfy { !$0.exposed || $0.weightedMinutes >= 15 })
        }
        // Against the camera tracks: the 90 ordered pairs of the 10 phones tracked in the scene, 6
        // of them 15 minutes closer than 1.5 m; gaend notifies 2 of those and 7 others.
        let tracks = try CameraTracks(zip: Self.folder + "/computer-vision/2_coworking.zip")
        let truth = ExperimentTraces.truth(tracks, phones: Set(rows.map(\.receiver)), closerThan: 1.5)
        let notified = Set(pairs.filter(\.scores.verdict.exposed).map { ExperimentTraces.Pair(receiver: $0.receiver, transmitter: $0.transmitter) })
        #expect(truth.count == 90)
        #expect(truth.values.filter { $0 }.count == 6)
        #expect(truth.filter { $0.value && notified.contains($0.key) }.count == 2)
        #expect(truth.filter { !$0.value && notified.contains($0.key) }.count == 7)
    }
}
