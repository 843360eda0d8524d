// SPDX-License-Identifier: GPL-3.0-or-later

/// A scan instance as Google's windows (`backend-checks/`) and gaend's both give it.
package struct AlignedInstance: Hashable, Sendable {
    package var typical: Int
    package var minimum: Int
    package var seconds: Int

    package init(typical: Int, minimum: Int, seconds: Int) {
        self.typical = typical
        self.minimum = minimum
        self.seconds = seconds
    }
}

/// Google's windows carry no time and no transmitter, so telling whose a window is can only be a
/// likeness of its scan instances to the ones gaend computed for each transmitter a receiver
/// heard. This is the alignment SOURCES.md (../shared/traces) measured against a control: every
/// instance of Google's window is paired with one computed instance, in order, or left out.
///
/// A pair scores on the seconds (+3 the same, −2 not), the typical attenuation (+2 equal, +1 within
/// 1 dB, −1 within 3 dB, else −2) and the minimum (+2, +1, −1, else −3); an instance left out on
/// either side costs 4. Google's window is aligned whole, the computed instances from anywhere to
/// anywhere (a window is a stretch of a transmitter's day). A window is attributed when its best
/// transmitter scores at least 3 a Google instance and 3 more than the runner-up; each computed
/// instance is taken by one Google window at most.
package enum InstanceAlignment {
    package static let gap = -4
    package static let pointsPerInstance = 3
    package static let marginOverRunnerUp = 3

    package static func score(_ google: AlignedInstance, _ computed: AlignedInstance) -> Int {
        func attenuation(_ a: Int, _ b: Int, miss: Int) -> Int {
            let difference = abs(a - b)
            return difference == 0 ? 2 : difference <= 1 ? 1 : difference <= 3 ? -1 : miss
        }
        return (google.seconds == computed.seconds ? 3 : -2) + attenuation(google.typical, computed.typical, miss: -2)
            + attenuation(google.minimum, computed.minimum, miss: -3)
    }

    /// The best alignment of `window` (whole) against a stretch of `computed`, skipping the
    /// computed instances `taken` marks: its score and the pairs (index in `window`, index in
    /// `computed`).
    package static func align(_ window: [AlignedInstance], _ computed: [AlignedInstance], taken: Set<Int> = []) -> (score: Int, pairs: [(Int, Int)]) {
        let rows = window.count
        let columns = computed.count
        guard rows > 0 else { return (0, []) }
        let forbidden = Int.min / 4
        // best[i][j]: the best score of window[0..<i] aligned to a stretch of computed ending at j.
        var best = [[Int]](repeating: [Int](repeating: 0, count: columns + 1), count: rows + 1)
        // 0 diagonal, 1 window instance left out, 2 computed instance left out.
        var move = [[UInt8]](repeating: [UInt8](repeating: 0, count: columns + 1), count: rows + 1)
        for i in 1...rows {
            best[i][0] = best[i - 1][0] + gap
            move[i][0] = 1
        }
        // A stretch may start anywhere in `computed`: row 0 is free.
        if columns > 0 {
            for i in 1...rows {
                for j in 1...columns {
                    let pair = taken.contains(j - 1) ? forbidden : best[i - 1][j - 1] + score(window[i - 1], computed[j - 1])
                    let leaveWindow = best[i - 1][j] + gap
                    let leaveComputed = best[i][j - 1] + gap
                    if pair >= leaveWindow && pair >= leaveComputed {
                        (best[i][j], move[i][j]) = (pair, 0)
                    } else if leaveWindow >= leaveComputed {
                        (best[i][j], move[i][j]) = (leaveWindow, 1)
                    } else {
                        (best[i][j], move[i][j]) = (leaveComputed, 2)
                    }
                }
            }
        }
        // …and end anywhere.
        var end = 0
        for j in 0...columns where best[rows][j] > best[rows][end] { end = j }
        var pairs = [(Int, Int)]()
        var (i, j) = (rows, end)
        while i > 0 {
            switch move[i][j] {
            case 0:
                pairs.append((i - 1, j - 1))
                (i, j) = (i - 1, j - 1)
            case 1: i -= 1
            default: j -= 1
            }
        }
        return (best[rows][end], pairs.reversed())
    }

    /// One Google window attributed: to whom, with what score, and its instances' pairs.
    package struct Attribution: Sendable {
        package var window: Int
        package var transmitter: String
        package var score: Int
        package var pairs: [(google: AlignedInstance, computed: AlignedInstance)]
    }

    /// Attributes Google's `windows` of one receiver among the `computed` instances per
    /// transmitter (each transmitter's in time order): the windows whose best alignment is surest
    /// first, each computed instance taken once.
    package static func attribute(_ windows: [[AlignedInstance]], among computed: [String: [AlignedInstance]]) -> [Attribution] {
        var taken = [String: Set<Int>]()
        struct Candidate {
            var window: Int
            var transmitter: String
            var score: Int
            var margin: Int
        }
        func candidate(_ index: Int) -> (Candidate, [(Int, Int)])? {
            let window = windows[index]
            guard !window.isEmpty else { return nil }
            var scored = computed.keys.sorted().map { transmitter in
                (transmitter, align(window, computed[transmitter]!, taken: taken[transmitter] ?? []))
            }
            scored.sort { $0.1.score > $1.1.score }
            guard let first = scored.first else { return nil }
            let runnerUp = scored.dropFirst().first?.1.score ?? Int.min / 4
            let found = Candidate(window: index, transmitter: first.0, score: first.1.score, margin: first.1.score - runnerUp)
            guard found.score >= pointsPerInstance * window.count, found.margin >= marginOverRunnerUp else { return nil }
            return (found, first.1.pairs)
        }
        // Surest first: the highest score per instance.
        let order = windows.indices.compactMap { index in candidate(index).map { (index, Double($0.0.score) / Double(windows[index].count)) } }
            .sorted { ($0.1, $1.0) > ($1.1, $0.0) }.map(\.0)
        var attributions = [Attribution]()
        for index in order {
            // Aligned again: what surer windows took is not there any more.
            guard let (found, pairs) = candidate(index) else { continue }
            let instances = computed[found.transmitter]!
            for (_, j) in pairs { taken[found.transmitter, default: []].insert(j) }
            attributions.append(
                Attribution(
                    window: index, transmitter: found.transmitter, score: found.score,
                    pairs: pairs.map { (windows[index][$0.0], instances[$0.1]) }))
        }
        return attributions.sorted { $0.window < $1.window }
    }
}
