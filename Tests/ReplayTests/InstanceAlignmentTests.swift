// SPDX-License-Identifier: GPL-3.0-or-later

import Replay
import Testing

/// SOURCES.md's alignment of Google's windows against gaend's instances, on hand-made instances.
@Suite struct InstanceAlignmentTests {
    static func instances(_ values: [(Int, Int, Int)]) -> [AlignedInstance] {
        values.map { AlignedInstance(typical: $0.0, minimum: $0.1, seconds: $0.2) }
    }

    @Test func pairsScoreAsSourcesSays() {
        let google = AlignedInstance(typical: 60, minimum: 58, seconds: 300)
        #expect(InstanceAlignment.score(google, google) == 7)
        #expect(InstanceAlignment.score(google, AlignedInstance(typical: 61, minimum: 57, seconds: 300)) == 5)
        #expect(InstanceAlignment.score(google, AlignedInstance(typical: 63, minimum: 61, seconds: 240)) == -4)
        #expect(InstanceAlignment.score(google, AlignedInstance(typical: 70, minimum: 70, seconds: 240)) == -7)
    }

    @Test func aWindowFoundInsideADayIsItsTransmitters() {
        let window = Self.instances([(60, 58, 300), (62, 59, 300), (55, 50, 240), (64, 60, 300)])
        // T1's day holds the window between other instances; T2's is alike, one instance off.
        let t1 = Self.instances([(70, 68, 300), (71, 69, 120)]) + window + Self.instances([(80, 79, 300)])
        var t2 = window
        t2[2] = AlignedInstance(typical: 66, minimum: 65, seconds: 300)
        let aligned = InstanceAlignment.align(window, t1)
        #expect(aligned.score == 28)
        #expect(aligned.pairs.map(\.1) == [2, 3, 4, 5])
        // A missing instance costs a gap.
        #expect(InstanceAlignment.align(window, Array(t1[0..<4]) + Array(t1[5...])).score == 3 * 7 - 4)

        let attributed = InstanceAlignment.attribute([window, window], among: ["T1": t1, "T2": t2])
        #expect(attributed.count == 2)
        #expect(attributed.first?.transmitter == "T1" && attributed.first?.score == 28)
        // The second copy cannot take T1's instances again: T2's alike ones are what is left.
        #expect(attributed.last?.transmitter == "T2")
    }

    @Test func aWindowLikeNobodysIsNotAttributed() {
        let window = Self.instances([(60, 58, 300), (62, 59, 300), (55, 50, 240)])
        let far = Self.instances([(75, 74, 60), (77, 76, 120), (79, 78, 60)])
        #expect(InstanceAlignment.attribute([window], among: ["T1": far, "T2": far]).isEmpty)
        // Two transmitters alike: no margin, no attribution.
        #expect(InstanceAlignment.attribute([window], among: ["T1": window, "T2": window]).isEmpty)
    }
}
