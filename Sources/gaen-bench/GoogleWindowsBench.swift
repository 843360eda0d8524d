// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import KeyFiles
import Foundation
import Replay

/// A scan instance as both sides give it: Google's windows (`backend-checks/`) and gaend's replay.
typealias ComparedInstance = AlignedInstance

/// How Google's windows are matched with gaend's. Google's carry no time and no transmitter, so a
/// match can only be a likeness of attenuations and seconds; every way of matching is therefore
/// also run against another receiver's windows, where any match is chance.
enum WindowMatching {
    /// The longest run of consecutive instances of `a` and `b` that `matches` pairs: its length and
    /// where it starts in each.
    static func longestRun(
        _ a: [ComparedInstance], _ b: [ComparedInstance], _ matches: (ComparedInstance, ComparedInstance) -> Bool
    ) -> (length: Int, a: Int, b: Int) {
        var best = (length: 0, a: 0, b: 0)
        // lengths[j]: the run ending at the current a[i] and b[j - 1].
        var previous = [Int](repeating: 0, count: b.count + 1)
        for i in a.indices {
            var current = [Int](repeating: 0, count: b.count + 1)
            for j in b.indices where matches(a[i], b[j]) {
                current[j + 1] = previous[j] + 1
                if current[j + 1] > best.length { best = (current[j + 1], i - current[j + 1] + 1, j - current[j + 1] + 1) }
            }
            previous = current
        }
        return best
    }

    /// The length of a longest common subsequence of `a` and `b` under `matches`.
    static func commonSubsequence(_ a: [ComparedInstance], _ b: [ComparedInstance], _ matches: (ComparedInstance, ComparedInstance) -> Bool) -> Int {
        var previous = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var current = [Int](repeating: 0, count: b.count + 1)
            for (j, y) in b.enumerated() {
                current[j + 1] = matches(x, y) ? previous[j] + 1 : max(previous[j + 1], current[j])
            }
            previous = current
        }
        return previous[b.count]
    }

    /// SOURCES.md's attribution: the same seconds and typical attenuations within 3 dB, in order.
    static func loose(_ x: ComparedInstance, _ y: ComparedInstance) -> Bool { x.seconds == y.seconds && abs(x.typical - y.typical) <= 3 }
    /// The attribution kept: the same seconds, typical and minimum attenuations within 1 dB.
    static func tight(_ x: ComparedInstance, _ y: ComparedInstance) -> Bool {
        x.seconds == y.seconds && abs(x.typical - y.typical) <= 1 && abs(x.minimum - y.minimum) <= 1
    }
    /// For the seconds' agreement, a likeness that leaves the seconds free.
    static func sameAttenuations(_ x: ComparedInstance, _ y: ComparedInstance) -> Bool { x.typical == y.typical && abs(x.minimum - y.minimum) <= 1 }
    /// For the typical attenuation's agreement, a likeness that leaves it free.
    static func sameSecondsAndMinimum(_ x: ComparedInstance, _ y: ComparedInstance) -> Bool {
        x.seconds == y.seconds && abs(x.minimum - y.minimum) <= 1
    }
    /// A run this long is what tells a match from chance: of Google's 1,810 windows, 294 are
    /// attributed by one under `tight` at their own receiver and 15 at another (`gaen-bench traces`).
    static let runNeeded = 3
}

extension TracesBench {
    typealias Pair = ExperimentTraces.Pair

    /// SwissCovid's rule (55 and 63 dB, per day), the one compared on both sides.
    static var swissCovid: ExposureConfiguration {
        var rule = PerDayConfiguration()
        rule.attenuationThresholds = [55, 63]
        return ExposureConfiguration(rule: .perDayDuration(rule), format: .swissCovid)
    }

    /// `rows` replayed under SwissCovid's rule at the phones' own calibration that day (SOURCES.md:
    /// TX -24, correction -3, so -21 - rssi), in a scratch directory removed after.
    static func replayAsThePhones(_ rows: [RecordedSighting]) async throws -> (pairs: [ReplayPair], statistics: ReplayStatistics) {
        var settings = TraceReplay.Settings(configuration: swissCovid)
        settings.rssiCorrection = -3
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gaen-bench-traces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: scratch) }
        return try await TraceReplay(settings: settings, scratch: scratch).run(rows)
    }

    /// Google's own windows (`backend-checks/RR-checkTT.json`: computed on phone TT, SOURCES.md)
    /// against gaend's replay of the sqlite rows at the phones' own calibration that day (TX −24,
    /// correction −3: −21 − rssi). Printed: how many of Google's windows can be told to be a
    /// transmitter's, by SOURCES.md's way and by a stricter one, each beside what the same way finds
    /// at another receiver; how often matched scan instances agree on the seconds and on the typical
    /// attenuation; SwissCovid's decision per (receiver, transmitter) on each side; each receiver's
    /// seconds per bucket.
    func againstGoogle(_ rows: [RecordedSighting]) async throws {
        let google = try Self.googleWindows(traces + "/backend-checks")
        let configuration = Self.swissCovid
        let (pairs, _) = try await Self.replayAsThePhones(rows)
        let day = UTCDay(containing: rows.map(\.time).max() ?? UnixTime(seconds: 0))
        var ours = [Pair: [[ComparedInstance]]]()
        for pair in pairs {
            ours[Pair(receiver: pair.receiver, transmitter: pair.transmitter)] = pair.windows.map {
                $0.scanInstances.map { ComparedInstance(typical: $0.typicalAttenuation, minimum: $0.minimumAttenuation, seconds: $0.secondsSinceLastScan) }
            }
        }
        let receivers = Set(ours.keys.map(\.receiver)).sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        // Another receiver for each: the next one in order.
        func other(_ receiver: String) -> String {
            receivers[((receivers.firstIndex(of: receiver) ?? 0) + 1) % receivers.count]
        }
        func windows(at receiver: String) -> [(pair: Pair, windows: [[ComparedInstance]])] {
            ours.filter { $0.key.receiver == receiver }.sorted { (Int($0.key.transmitter) ?? 0) < (Int($1.key.transmitter) ?? 0) }.map { ($0.key, $0.value) }
        }
        let total = google.values.reduce(0) { $0 + $1.count }

        // SOURCES.md's attribution: the transmitter sharing the longest common subsequence, at
        // least half of the window's instances.
        func loosely(_ window: [ComparedInstance], at receiver: String) -> Bool {
            let best = windows(at: receiver).map { WindowMatching.commonSubsequence(window, $0.windows.flatMap { $0 }, WindowMatching.loose) }.max() ?? 0
            return best >= max(2, window.count / 2)
        }
        // The attribution kept: a run of `runNeeded` instances under `tight` in one transmitter's
        // windows, longer than any other transmitter's.
        func tightly(_ window: [ComparedInstance], at receiver: String) -> Pair? {
            let runs = windows(at: receiver).map { candidate in
                (candidate.pair, candidate.windows.map { WindowMatching.longestRun(window, $0, WindowMatching.tight).length }.max() ?? 0)
            }.sorted { $0.1 > $1.1 }
            guard let best = runs.first, best.1 >= WindowMatching.runNeeded, runs.dropFirst().first.map({ $0.1 < best.1 }) ?? true else { return nil }
            return best.0
        }
        var looseHere = 0
        var looseElsewhere = 0
        var tightElsewhere = 0
        var theirs = [Pair: [[ComparedInstance]]]()
        for (receiver, windowsHere) in google.sorted(by: { $0.key < $1.key }) {
            for window in windowsHere.sorted(by: {
                $0.lexicographicallyPrecedes($1) { ($0.typical, $0.minimum, $0.seconds) < ($1.typical, $1.minimum, $1.seconds) }
            }) {
                if loosely(window, at: receiver) { looseHere += 1 }
                if loosely(window, at: other(receiver)) { looseElsewhere += 1 }
                if tightly(window, at: other(receiver)) != nil { tightElsewhere += 1 }
                if let pair = tightly(window, at: receiver) { theirs[pair, default: []].append(window) }
            }
        }
        let tightHere = theirs.values.reduce(0) { $0 + $1.count }

        // Per instance: the windows with a run of `runNeeded` under a likeness that leaves the
        // compared quantity free, and how often that quantity agrees along the run.
        func agreement(
            at receiver: (String) -> String, _ likeness: (ComparedInstance, ComparedInstance) -> Bool, _ agrees: (ComparedInstance, ComparedInstance) -> Bool
        ) -> (instances: Int, agreeing: Int) {
            var result = (instances: 0, agreeing: 0)
            for (observer, windowsHere) in google {
                let candidates = windows(at: receiver(observer)).flatMap(\.windows)
                for window in windowsHere {
                    guard
                        let (run, candidate) = candidates.map({ (WindowMatching.longestRun(window, $0, likeness), $0) }).max(by: { $0.0.length < $1.0.length }),
                        run.length >= WindowMatching.runNeeded
                    else { continue }
                    for offset in 0..<run.length {
                        result.instances += 1
                        if agrees(window[run.a + offset], candidate[run.b + offset]) { result.agreeing += 1 }
                    }
                }
            }
            return result
        }
        func percent(_ part: Int, _ whole: Int) -> String { Figures.decimals(Double(part) / Double(max(1, whole)) * 100, 1) + " %" }
        func line(_ figures: (instances: Int, agreeing: Int)) -> String { "\(figures.instances) instances, \(percent(figures.agreeing, figures.instances))" }
        let seconds = agreement(at: { $0 }, WindowMatching.sameAttenuations) { $0.seconds == $1.seconds }
        let secondsChance = agreement(at: other, WindowMatching.sameAttenuations) { $0.seconds == $1.seconds }
        let typical = agreement(at: { $0 }, WindowMatching.sameSecondsAndMinimum) { abs($0.typical - $1.typical) <= 1 }
        let typicalChance = agreement(at: other, WindowMatching.sameSecondsAndMinimum) { abs($0.typical - $1.typical) <= 1 }

        print("against Google's own windows (backend-checks, -21 - rssi, the whole day; at another receiver: what chance gives):")
        print("  \(total) distinct windows; attributed to a transmitter")
        print(
            "    as SOURCES.md explains (in order, the same seconds, typical within 3 dB, half the instances): \(looseHere), at another receiver \(looseElsewhere)"
        )
        print(
            "    by a run of \(WindowMatching.runNeeded) instances (the same seconds, typical and minimum within 1 dB), one transmitter's longest:"
                + " \(tightHere), at another receiver \(tightElsewhere)")
        print("  scan instances in a run of \(WindowMatching.runNeeded) with gaend's:")
        print(
            "    the typical attenuation equal, the minimum within 1 dB: the same secondsSinceLastScan for \(line(seconds)) (another receiver: \(line(secondsChance)))"
        )
        print(
            "    the same seconds, the minimum within 1 dB: the typical attenuation within 1 dB for \(line(typical)) (another receiver: \(line(typicalChance)))"
        )

        func exposed(_ windows: [[ComparedInstance]]) -> Bool {
            let built = windows.map { instances in
                ExposureWindow(
                    day: day, reportType: .confirmedTest, infectiousness: .standard, calibrationConfidence: .lowest, transmissionRiskLevel: 0,
                    scanInstances: instances.map {
                        ScanInstance(typicalAttenuation: $0.typical, minimumAttenuation: $0.minimum, secondsSinceLastScan: $0.seconds)
                    })
            }
            return ExposureJudge.score(built, configuration: configuration, today: day).verdict.exposed
        }
        let decisions = theirs.keys.map { (gaend: exposed(ours[$0] ?? []), google: exposed(theirs[$0] ?? [])) }
        print(
            "  SwissCovid's rule on the \(decisions.count) pairs with an attributed window (Google's side: only those windows):"
                + " the same decision for \(decisions.filter { $0.gaend == $0.google }.count);"
                + " notified by Google's windows \(decisions.filter(\.google).count), by gaend's \(decisions.filter(\.gaend).count),"
                + " by both \(decisions.filter { $0.gaend && $0.google }.count)")
        print("  (Google's windows run from 12:39 UTC to the matching, gaps between scenarios included, and hold the sightings the sqlite rows miss)")
        print("  receiver  seconds <55 dB (gaend / Google)  55-62 dB  63+ dB")
        for receiver in receivers {
            func buckets(_ windows: [[ComparedInstance]]) -> [Int] {
                var sums = [0, 0, 0]
                for instance in windows.flatMap({ $0 }) { sums[instance.typical < 55 ? 0 : instance.typical < 63 ? 1 : 2] += instance.seconds }
                return sums
            }
            let mine = buckets(windows(at: receiver).flatMap(\.windows))
            let google = buckets(Array(google[receiver] ?? []))
            print(
                "  \(receiver.padding(toLength: 8, withPad: " ", startingAt: 0))  \(mine[0]) / \(google[0])  \(mine[1]) / \(google[1])  \(mine[2]) / \(google[2])"
            )
        }
    }

    /// Google's distinct windows per observing phone (the `TT` of `RR-checkTT.json`, SOURCES.md).
    static func googleWindows(_ folder: String) throws -> [String: Set<[ComparedInstance]>] {
        var google = [String: Set<[ComparedInstance]>]()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".json") {
            guard let observer = name.split(separator: "-check").last.flatMap({ Int($0.prefix(2)) }).map(String.init),
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) as? [String: Any]
            else { continue }
            for case let windows as [[String: Any]] in object.values {
                for window in windows {
                    google[observer, default: []].insert(
                        (window["scanInstances"] as? [[String: Any]] ?? []).map {
                            ComparedInstance(
                                typical: $0["typicalAttenuationDb"] as? Int ?? -1, minimum: $0["minAttenuationDb"] as? Int ?? -1,
                                seconds: $0["secondsSinceLastScan"] as? Int ?? -1)
                        })
                }
            }
        }
        return google
    }
}
