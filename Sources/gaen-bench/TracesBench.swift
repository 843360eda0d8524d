// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import Detection
import ENCore
import Foundation
import KeyFiles
import Replay

/// DP-3T's experiment 34 (EPFL, 30 July 2020; `../shared/traces/SOURCES.md`) through gaend's
/// code: the per-beacon table SwissCovid published, from gaend's attenuation, and every scenario
/// replayed (`TraceReplay`) under SwissCovid's rule. The sqlite files are read as they are and
/// converted at run time: their licence (CC BY-ND 4.0) forbids committing a converted copy.
struct TracesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "traces", abstract: "Real encounters: SwissCovid's per-beacon table and each scenario replayed through gaend.")

    @Option(help: "The folder of experiment 34 (default: ../shared/traces/dp3t-exp34 beside the package).")
    var traces = FileManager.default.currentDirectoryPath + "/../shared/traces/dp3t-exp34"

    @Option(help: "Where to write the chart of TPR against FPR as the lower threshold moves (SVG).")
    var chart = FileManager.default.currentDirectoryPath + "/.build/traces-roc.svg"

    @Flag(help: "Only the whole day from the phones' HCI captures against Google's windows.")
    var wholeDayOnly = false

    @Flag(help: "With --whole-day-only: the figures as one JSON object (the tests read it).")
    var json = false

    func run() async throws {
        guard FileManager.default.fileExists(atPath: traces + "/scenario01-lunch.sqlite") else {
            print("traces: skipped: \(traces) is absent (../shared/traces/dp3t-exp34, read SOURCES.md there)")
            return
        }
        if wholeDayOnly {
            try await wholeDay()
            return
        }
        var scenarios = [(name: String, rows: [RecordedSighting])]()
        for name in ExperimentTraces.scenarios { scenarios.append((name, try ExperimentTraces.sightings(scenario: name, in: traces))) }
        print("traces: DP-3T experiment 34, \(Figures.grouped(Double(scenarios.map(\.rows.count).reduce(0, +)))) sightings in 6 scenarios")
        Self.perBeaconTable(scenarios.flatMap(\.rows))
        try await replay(scenarios)
        try await thresholdChart(scenarios)
        try await againstGoogle(scenarios.flatMap(\.rows))
        try await wholeDay()
    }

    /// SwissCovid's table (admin-ch/PT-System-Documents `SwissCovid-ExposureScore.pdf`, version of
    /// 11 September 2020, page 9): precision and recall of "attenuation ≤ t" for "closer than d",
    /// per received advertisement with a camera distance, all scenarios pooled, at 1.5, 2 and 3 m.
    static let published: [Int: [Double]] = [
        40: [0.876, 0.091, 0.943, 0.065, 0.983, 0.049], 41: [0.858, 0.105, 0.934, 0.077, 0.981, 0.059],
        42: [0.838, 0.121, 0.922, 0.089, 0.979, 0.069], 43: [0.825, 0.140, 0.917, 0.104, 0.978, 0.081],
        44: [0.794, 0.166, 0.905, 0.127, 0.976, 0.099], 45: [0.779, 0.185, 0.897, 0.142, 0.973, 0.112],
        46: [0.752, 0.209, 0.883, 0.164, 0.968, 0.131], 47: [0.734, 0.235, 0.875, 0.188, 0.967, 0.150],
        48: [0.715, 0.266, 0.866, 0.215, 0.966, 0.174], 49: [0.685, 0.311, 0.852, 0.258, 0.960, 0.212],
        50: [0.659, 0.361, 0.833, 0.306, 0.959, 0.256], 51: [0.634, 0.403, 0.819, 0.348, 0.954, 0.295],
        52: [0.622, 0.440, 0.812, 0.384, 0.952, 0.327], 53: [0.603, 0.491, 0.798, 0.435, 0.948, 0.375],
        54: [0.590, 0.522, 0.788, 0.466, 0.944, 0.405], 55: [0.570, 0.573, 0.769, 0.516, 0.935, 0.456],
        56: [0.556, 0.626, 0.755, 0.568, 0.926, 0.506], 57: [0.540, 0.669, 0.741, 0.614, 0.918, 0.553],
        58: [0.526, 0.707, 0.730, 0.655, 0.914, 0.597], 59: [0.504, 0.762, 0.710, 0.718, 0.902, 0.663],
        60: [0.493, 0.791, 0.699, 0.750, 0.895, 0.698], 61: [0.475, 0.831, 0.682, 0.799, 0.887, 0.754],
        62: [0.462, 0.870, 0.669, 0.844, 0.879, 0.805], 63: [0.449, 0.896, 0.656, 0.875, 0.869, 0.842],
        64: [0.440, 0.916, 0.646, 0.899, 0.862, 0.872], 65: [0.429, 0.941, 0.633, 0.928, 0.855, 0.909],
        66: [0.424, 0.954, 0.627, 0.944, 0.850, 0.929], 67: [0.418, 0.966, 0.622, 0.961, 0.847, 0.950],
        68: [0.413, 0.979, 0.615, 0.976, 0.842, 0.970], 69: [0.411, 0.990, 0.612, 0.986, 0.840, 0.983],
        70: [0.409, 0.994, 0.610, 0.993, 0.838, 0.990],
    ]

    /// The table from gaend's attenuation: max(TX − corrected RSSI, 0) with TX −24 dBm and the
    /// receiver correction +5 dB applied as the scanner applies it (the calibration the paper used,
    /// Google's of 13 August 2020). Counted as DP-3T's `figures.py::precision_recall_table` counts:
    /// a hit is distance ≤ d and attenuation ≤ t, a miss distance ≤ d and attenuation > t, a false
    /// alarm distance ≥ d and attenuation ≤ t (a row at exactly d is both; the table was made so).
    static func perBeaconTable(_ rows: [RecordedSighting]) {
        let measured = rows.compactMap { row in
            row.distance.map { (attenuation: max(-24 - Int(ScanWindowAggregator.corrected(row.rssi, by: 5)), 0), distance: $0) }
        }
        print("per beacon (\(Figures.grouped(Double(measured.count))) advertisements with a camera distance; attenuation = -29 - rssi):")
        print("  dB   P@1.5m R@1.5m  P@2m   R@2m   P@3m   R@3m   (SwissCovid-ExposureScore.pdf, p. 9)")
        var identical = 0
        for threshold in 40...70 {
            var cells = [Double]()
            for distance in [1.5, 2.0, 3.0] {
                var hits = 0
                var misses = 0
                var falseAlarms = 0
                for row in measured {
                    if row.distance <= distance { if row.attenuation <= threshold { hits += 1 } else { misses += 1 } }
                    if row.distance >= distance && row.attenuation <= threshold { falseAlarms += 1 }
                }
                cells += [Double(hits) / Double(hits + falseAlarms), Double(hits) / Double(hits + misses)]
            }
            let printed = cells.map { Figures.decimals($0, 3) }
            let expected = (published[threshold] ?? []).map { Figures.decimals($0, 3) }
            identical += zip(printed, expected).filter { $0 == $1 }.count
            let marks = zip(printed, expected).map { $0 == $1 ? $0 : "\($0)≠\($1)" }
            print("  \(threshold)   " + marks.joined(separator: "  "))
        }
        print("  identical to the published table at three decimals: \(identical) of \(published.count * 6) cells")
    }

    /// Each scenario through `TraceReplay` under SwissCovid's served configuration (55/63 dB,
    /// factors 1.0/0.5, 15 minutes, DP-3T v2's per-day semantics), judged against the camera
    /// tracks: the ordered pairs of phones the cameras tracked in the scene, truly exposed when the
    /// two spent 15 minutes closer than 1.5 m (and 2 m).
    func replay(_ scenarios: [(name: String, rows: [RecordedSighting])]) async throws {
        var swissCovid = PerDayConfiguration()
        swissCovid.attenuationThresholds = [55, 63]
        let configuration = ExposureConfiguration(rule: .perDayDuration(swissCovid), format: .swissCovid)
        print("replayed through gaend (TX -24 dBm, RSSI correction +5 dB), SwissCovid's rule, against the camera tracks:")
        print(
            "  scenario     rows  scans  heard  notified  seconds | pairs  exposed<1.5m  TP  FP  TPR    FPR    precision | exposed<2m  TPR    FPR    precision")
        var pooled = [Float: Counts]()
        var replaySeconds = 0.0
        let clock = ContinuousClock()
        for (index, (name, rows)) in scenarios.enumerated() {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gaen-bench-traces-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let start = clock.now
            let (pairs, statistics) = try await TraceReplay(settings: TraceReplay.Settings(configuration: configuration), scratch: scratch).run(rows)
            let seconds = Figures.seconds(start.duration(to: clock.now))
            replaySeconds += seconds
            let notified = Set(pairs.filter(\.scores.verdict.exposed).map { ExperimentTraces.Pair(receiver: $0.receiver, transmitter: $0.transmitter) })
            let tracks = try CameraTracks(zip: traces + "/computer-vision/\(ExperimentTraces.tracks[index]).zip")
            let phones = Set(rows.map(\.receiver))
            var line = "  \(name.padding(toLength: 11, withPad: " ", startingAt: 0)) "
            line += String(format: "%5d  %5d  %5d  %8d  %7.2f |", rows.count, statistics.scans, statistics.pairsHeard, statistics.pairsExposed, seconds)
            for distance: Float in [1.5, 2] {
                let counts = Counts(ExperimentTraces.truth(tracks, phones: phones, closerThan: distance), notified: notified)
                pooled[distance, default: Counts()].add(counts)
                line +=
                    distance == 1.5
                    ? String(format: " %5d  %12d  %2d  %2d  ", counts.pairs, counts.exposed, counts.truePositives, counts.falsePositives) + counts.rates + " |"
                    : String(format: " %10d  ", counts.exposed) + counts.rates
            }
            print(line)
        }
        for distance: Float in [1.5, 2] {
            let counts = pooled[distance] ?? Counts()
            print(
                "  all six, closer than \(distance) m: \(counts.pairs) pairs, \(counts.exposed) truly exposed, \(counts.truePositives + counts.falsePositives) notified"
                    + " (\(counts.truePositives) rightly): " + counts.rates)
        }
        print("  the six replays took \(Figures.decimals(replaySeconds, 2)) s")
    }

    /// Notifications against the truth, over the pairs judged.
    struct Counts {
        var pairs = 0
        var exposed = 0
        var truePositives = 0
        var falsePositives = 0

        init() {}

        init(_ truth: [ExperimentTraces.Pair: Bool], notified: Set<ExperimentTraces.Pair>) {
            for (pair, exposed) in truth {
                pairs += 1
                if exposed { self.exposed += 1 }
                if notified.contains(pair) { if exposed { truePositives += 1 } else { falsePositives += 1 } }
            }
        }

        mutating func add(_ other: Counts) {
            pairs += other.pairs
            exposed += other.exposed
            truePositives += other.truePositives
            falsePositives += other.falsePositives
        }

        /// TPR, FPR and precision, "-" where undefined.
        var rates: String {
            func ratio(_ a: Int, _ b: Int) -> String { b == 0 ? "  -  " : Figures.decimals(Double(a) / Double(b), 3) }
            return
                "TPR \(ratio(truePositives, exposed))  FPR \(ratio(falsePositives, pairs - exposed))  precision \(ratio(truePositives, truePositives + falsePositives))"
        }
    }

    /// What a health authority looks at to choose thresholds: pooled TPR against FPR (closer than
    /// 1.5 m for 15 minutes) as SwissCovid's lower threshold moves from 45 to 70 dB, the upper one
    /// staying 8 dB above it as 55/63 has it, each point a replay of the six scenarios. Written as SVG.
    func thresholdChart(_ scenarios: [(name: String, rows: [RecordedSighting])]) async throws {
        var truths = [[ExperimentTraces.Pair: Bool]]()
        for (index, (_, rows)) in scenarios.enumerated() {
            let tracks = try CameraTracks(zip: traces + "/computer-vision/\(ExperimentTraces.tracks[index]).zip")
            truths.append(ExperimentTraces.truth(tracks, phones: Set(rows.map(\.receiver)), closerThan: 1.5))
        }
        var points = [(lower: Int, fpr: Double, tpr: Double)]()
        for lower in 45...70 {
            var rule = PerDayConfiguration()
            rule.attenuationThresholds = [lower, lower + 8]
            let configuration = ExposureConfiguration(rule: .perDayDuration(rule), format: .swissCovid)
            var counts = Counts()
            for (index, (_, rows)) in scenarios.enumerated() {
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gaen-bench-traces-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let (pairs, _) = try await TraceReplay(settings: TraceReplay.Settings(configuration: configuration), scratch: scratch).run(rows)
                let notified = Set(
                    pairs.filter(\.scores.verdict.exposed).map { ExperimentTraces.Pair(receiver: $0.receiver, transmitter: $0.transmitter) })
                counts.add(Counts(truths[index], notified: notified))
            }
            points.append(
                (
                    lower, Double(counts.falsePositives) / Double(max(1, counts.pairs - counts.exposed)),
                    Double(counts.truePositives) / Double(max(1, counts.exposed))
                ))
        }
        print(
            "lower threshold (upper 8 dB above), pooled at 1.5 m: "
                + points.filter { $0.lower % 5 == 0 }.map {
                    "\($0.lower) dB TPR \(Figures.decimals($0.tpr, 2)) FPR \(Figures.decimals($0.fpr, 2))"
                }.joined(separator: "; "))
        try Self.svg(points).write(toFile: chart, atomically: true, encoding: .utf8)
        print("chart: \(chart)")
    }

    /// A plain SVG chart: FPR across, TPR up, each point labelled with its lower threshold.
    static func svg(_ points: [(lower: Int, fpr: Double, tpr: Double)]) -> String {
        let (width, height, margin) = (680.0, 480.0, 60.0)
        func x(_ fpr: Double) -> Double { margin + fpr * (width - 2 * margin) }
        func y(_ tpr: Double) -> Double { height - margin - tpr * (height - 2 * margin) }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="24" text-anchor="middle" font-size="14">DP-3T experiment 34 through gaend: SwissCovid's rule, lower threshold 45 to 70 dB</text>
            <line x1="\(margin)" y1="\(y(0))" x2="\(x(1))" y2="\(y(0))" stroke="black"/>
            <line x1="\(margin)" y1="\(y(0))" x2="\(margin)" y2="\(y(1))" stroke="black"/>
            <line x1="\(x(0))" y1="\(y(0))" x2="\(x(1))" y2="\(y(1))" stroke="#bbb" stroke-dasharray="4"/>
            <text x="\(Int(width / 2))" y="\(Int(height - 20))" text-anchor="middle">false positive rate (pairs not 15 min closer than 1.5 m, notified)</text>
            <text x="18" y="\(Int(height / 2))" text-anchor="middle" transform="rotate(-90 18 \(Int(height / 2)))">true positive rate (pairs 15 min closer than 1.5 m, notified)</text>

            """
        for tick in stride(from: 0.0, through: 1.0, by: 0.2) {
            svg += "<text x=\"\(x(tick))\" y=\"\(y(0) + 16)\" text-anchor=\"middle\">\(Figures.decimals(tick, 1))</text>\n"
            svg += "<text x=\"\(margin - 8)\" y=\"\(y(tick) + 4)\" text-anchor=\"end\">\(Figures.decimals(tick, 1))</text>\n"
        }
        svg += "<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"2\" points=\""
        svg += points.map { "\(x($0.fpr)),\(y($0.tpr))" }.joined(separator: " ") + "\"/>\n"
        for point in points {
            svg += "<circle cx=\"\(x(point.fpr))\" cy=\"\(y(point.tpr))\" r=\"3\" fill=\"\(point.lower == 55 ? "#c0392b" : "#1f5fa8")\"/>\n"
            if point.lower % 5 == 0 {
                svg += "<text x=\"\(x(point.fpr) + 6)\" y=\"\(y(point.tpr) - 6)\">\(point.lower) dB</text>\n"
            }
        }
        return svg + "</svg>\n"
    }
}
