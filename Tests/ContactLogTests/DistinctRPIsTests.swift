// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Testing

/// Distinct RPIs per hour, day and fortnight, in bounded memory: exact while a span is small,
/// estimated within about 1 % past that, never counting a repeat twice.
@Suite struct DistinctRPIsTests {
    func rpi(_ number: Int) -> Bytes16 { SyntheticContacts.rpi(seed: 3, number: number).bytes }

    @Test func upToTheLimitTheCountIsExactAndRepeatsCountOnce() {
        var counter = DistinctRPIs(seed: 1)
        for round in 0..<3 {
            for number in 0..<DistinctRPIs.exactLimit { counter.insert(rpi(number)) }
            #expect(counter.count == DistinctRPIs.exactLimit, "round \(round)")
        }
        #expect(counter.isExact)
    }

    @Test(arguments: [2_000, 100_000, 1_000_000]) func pastTheLimitTheEstimateIsWithinTwoPercent(_ distinct: Int) {
        var counter = DistinctRPIs(seed: 7)
        for number in 0..<distinct { counter.insert(rpi(number)) }
        // Every RPI again: a repeat changes no register.
        let before = counter.count
        for number in stride(from: 0, to: distinct, by: 7) { counter.insert(rpi(number)) }
        #expect(counter.count == before)
        #expect(!counter.isExact)
        let error = abs(Double(counter.count - distinct)) / Double(distinct)
        #expect(error < 0.02, "\(counter.count) for \(distinct)")
    }

    @Test func naturalLogMatchesKnownValues() {
        for (x, expected) in [(1.0, 0.0), (2.0, 0.693_147_180_559_945_3), (16384.0, 9.704_060_527_839_234), (3.5, 1.252_762_968_495_368)] {
            #expect(abs(DistinctRPIs.naturalLog(x) - expected) < 1e-12, "\(x)")
        }
    }
}
