// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import KeyFiles
import Replay
import Storage

/// Experiment 34's whole day from the phones' own HCI captures (`pcaps/`, issue 36): gaend's
/// windows beside Google's (`backend-checks/`) instance by instance, each attribution beside its
/// control at another receiver (SOURCES.md's alignment, `InstanceAlignment`).
extension TracesBench {
    /// When each receiver ran its matching (its last attributed scan, SOURCES.md, UTC hh:mm), and a
    /// scan's length after it: its sightings are cut there, as Google's windows end there.
    static let matchingTimes: [String: (Int64, Int64)] = [
        "01": (16, 0), "02": (16, 0), "03": (16, 2), "06": (15, 57), "07": (16, 0), "08": (15, 57), "09": (15, 58), "10": (15, 56),
        "11": (15, 57), "12": (15, 54), "13": (15, 53), "14": (15, 54), "15": (15, 53), "17": (15, 58), "18": (15, 53), "19": (15, 56),
        "20": (15, 50),
    ]

    func wholeDay() async throws {
        let quietForJSON = json
        func print(_ line: String) { if !quietForJSON { Swift.print(line) } }
        let folder = traces + "/pcaps"
        guard FileManager.default.fileExists(atPath: folder) else {
            print("whole day: skipped: \(folder) is absent")
            return
        }
        let started = ContinuousClock.now
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".btsnoop") }.sorted()
        let captures = try names.map { try CaptureSightings(path: folder + "/" + $0, receiver: String($0.dropLast(8))) }
        let day = UTCDay(daysSinceEpoch: ISO8601.parseDate("2020-07-30")!)
        let rows = CaptureReplay.rows(captures, offsetSeconds: -7200).filter { row in
            guard let (hour, minute) = Self.matchingTimes[row.receiver] else { return true }
            return row.time <= day.start.adding(seconds: hour * 3600 + minute * 60 + 30)
        }
        let read = ContinuousClock.now - started
        let configuration = Self.swissCovid
        let (pairs, statistics) = try await Self.replayAsThePhones(rows)
        let replayed = ContinuousClock.now - started
        let known = rows.filter { $0.transmitter != CaptureReplay.unknownTransmitter }.count
        print(
            "whole day (the 18 phones' HCI captures, each cut at its matching; -21 - rssi): \(Figures.grouped(Double(known))) sightings of logged phones"
                + " (\(Figures.grouped(Double(rows.count - known))) of others), read in \(Figures.decimals(Figures.seconds(read), 1)) s,"
                + " replayed by \(Figures.decimals(Figures.seconds(replayed), 1)) s: \(statistics.scans) scans, \(statistics.windows) windows")

        // gaend's instances per receiver and transmitter, in time order.
        var computed = [String: [String: [AlignedInstance]]]()
        var windowsOf = [String: [String: [ExposureWindow]]]()
        for pair in pairs where pair.transmitter != CaptureReplay.unknownTransmitter {
            let windows = pair.windows.sorted { ($0.start ?? $0.day.start) < ($1.start ?? $1.day.start) }
            windowsOf[pair.receiver, default: [:]][pair.transmitter] = windows
            computed[pair.receiver, default: [:]][pair.transmitter] = windows.flatMap(\.scanInstances).map {
                AlignedInstance(typical: $0.typicalAttenuation, minimum: $0.minimumAttenuation, seconds: $0.secondsSinceLastScan)
            }
        }
        // Google's observers are numbered (1, 2…); the captures are named 01, 02….
        var google = [String: [[AlignedInstance]]]()
        for (observer, windows) in try Self.googleWindows(traces + "/backend-checks") {
            let name = observer.count == 1 ? "0" + observer : observer
            google[name] = Array(windows)
                .sorted { $0.lexicographicallyPrecedes($1) { ($0.typical, $0.minimum, $0.seconds) < ($1.typical, $1.minimum, $1.seconds) } }
        }
        let receivers = google.keys.filter { computed[$0] != nil }.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        func other(_ receiver: String) -> String { receivers[((receivers.firstIndex(of: receiver) ?? 0) + 1) % receivers.count] }

        var paired = [(google: AlignedInstance, computed: AlignedInstance)]()
        var attributedWindows = 0
        var controlWindows = 0
        var theirs = [String: [String: [[AlignedInstance]]]]()
        print("  attributions (SOURCES.md's alignment), each with its control at another receiver on the next line:")
        for receiver in receivers {
            let windows = google[receiver] ?? []
            let here = InstanceAlignment.attribute(windows, among: computed[receiver] ?? [:])
            let control = InstanceAlignment.attribute(windows, among: computed[other(receiver)] ?? [:])
            attributedWindows += here.count
            controlWindows += control.count
            for attribution in here {
                paired += attribution.pairs
                theirs[receiver, default: [:]][attribution.transmitter, default: []].append(windows[attribution.window])
            }
            print("    \(receiver): \(here.count) of \(windows.count) windows, \(here.reduce(0) { $0 + $1.pairs.count }) instances")
            print("      control, against \(other(receiver))'s: \(control.count) windows, \(control.reduce(0) { $0 + $1.pairs.count }) instances")
        }
        let total = receivers.reduce(0) { $0 + (google[$1]?.count ?? 0) }
        func share(_ predicate: ((google: AlignedInstance, computed: AlignedInstance)) -> Bool) -> String {
            Figures.decimals(Double(paired.filter(predicate).count) / Double(max(1, paired.count)) * 100, 1) + " %"
        }
        print("  \(attributedWindows) of \(total) Google windows attributed (control: \(controlWindows)); \(paired.count) paired instances:")
        print("    secondsSinceLastScan identical \(share { $0.google.seconds == $0.computed.seconds })")
        print(
            "    typical attenuation exact \(share { $0.google.typical == $0.computed.typical }),"
                + " within 1 dB \(share { abs($0.google.typical - $0.computed.typical) <= 1 })")
        print(
            "    minimum attenuation exact \(share { $0.google.minimum == $0.computed.minimum }),"
                + " within 1 dB \(share { abs($0.google.minimum - $0.computed.minimum) <= 1 })")

        // SwissCovid's decision per pair with an attributed window: gaend's windows against
        // Google's attributed ones.
        func exposed(_ instances: [[AlignedInstance]]) -> Bool {
            let windows = instances.map { window in
                ExposureWindow(
                    day: day, reportType: .confirmedTest, infectiousness: .standard, calibrationConfidence: .lowest, transmissionRiskLevel: 0,
                    scanInstances: window.map { ScanInstance(typicalAttenuation: $0.typical, minimumAttenuation: $0.minimum, secondsSinceLastScan: $0.seconds) }
                )
            }
            return ExposureJudge.score(windows, configuration: configuration, today: day).verdict.exposed
        }
        var decisions = [(gaend: Bool, google: Bool)]()
        for (receiver, byTransmitter) in theirs {
            for (transmitter, windows) in byTransmitter {
                let mine = (windowsOf[receiver]?[transmitter] ?? []).map { window in
                    window.scanInstances.map {
                        AlignedInstance(typical: $0.typicalAttenuation, minimum: $0.minimumAttenuation, seconds: $0.secondsSinceLastScan)
                    }
                }
                decisions.append((exposed(mine), exposed(windows)))
            }
        }
        print(
            "  SwissCovid's rule on the \(decisions.count) pairs with an attributed window: the same decision for"
                + " \(decisions.filter { $0.gaend == $0.google }.count); notified by Google's windows \(decisions.filter(\.google).count),"
                + " by gaend's \(decisions.filter(\.gaend).count), by both \(decisions.filter { $0.gaend && $0.google }.count)")

        // The buckets need no attribution: every window each side computed at a receiver.
        print("  receiver  seconds <55 dB (gaend / Google)  55-62 dB  63+ dB")
        var sums = [[0, 0, 0], [0, 0, 0]]
        for receiver in receivers {
            func buckets(_ instances: [AlignedInstance]) -> [Int] {
                var sums = [0, 0, 0]
                for instance in instances { sums[instance.typical < 55 ? 0 : instance.typical < 63 ? 1 : 2] += instance.seconds }
                return sums
            }
            let mine = buckets((computed[receiver] ?? [:]).values.flatMap { $0 })
            let theirs = buckets((google[receiver] ?? []).flatMap { $0 })
            for index in 0..<3 {
                sums[0][index] += mine[index]
                sums[1][index] += theirs[index]
            }
            print(
                "  \(receiver.padding(toLength: 8, withPad: " ", startingAt: 0))  \(mine[0]) / \(theirs[0])  \(mine[1]) / \(theirs[1])  \(mine[2]) / \(theirs[2])"
            )
        }
        if json {
            func ratio(_ index: Int) -> Double { Double(sums[0][index]) / Double(max(1, sums[1][index])) }
            let count = Double(max(1, paired.count))
            Swift.print(
                JSONValue.object([
                    ("sightings_logged", .int(Int64(known))), ("sightings_others", .int(Int64(rows.count - known))),
                    ("google_windows", .int(Int64(total))), ("attributed", .int(Int64(attributedWindows))), ("control", .int(Int64(controlWindows))),
                    ("paired_instances", .int(Int64(paired.count))),
                    ("seconds_identical", .number(Double(paired.filter { $0.google.seconds == $0.computed.seconds }.count) / count)),
                    ("typical_exact", .number(Double(paired.filter { $0.google.typical == $0.computed.typical }.count) / count)),
                    ("typical_within_1db", .number(Double(paired.filter { abs($0.google.typical - $0.computed.typical) <= 1 }.count) / count)),
                    ("pairs_decided", .int(Int64(decisions.count))), ("same_decision", .int(Int64(decisions.filter { $0.gaend == $0.google }.count))),
                    ("seconds_below_55db_ratio", .number(ratio(0))), ("seconds_55_62db_ratio", .number(ratio(1))), ("seconds_63db_ratio", .number(ratio(2))),
                    ("replay_seconds", .number(Figures.seconds(replayed))),
                ]).serialized())
        }
        print(
            "  all receivers: gaend's seconds below 55 dB are \(Figures.decimals(Double(sums[0][0]) / Double(max(1, sums[1][0])), 3)) of Google's;"
                + " 55-62 dB \(Figures.decimals(Double(sums[0][1]) / Double(max(1, sums[1][1])), 3)), 63+ dB \(Figures.decimals(Double(sums[0][2]) / Double(max(1, sums[1][2])), 3))"
        )
    }
}
