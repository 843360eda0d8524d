// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import KeyFiles

/// A synthetic fortnight for the matching benchmarks: a 14-day log of numbered RPIs, one aggregate
/// each, and random diagnosis keys of the same days.
enum SyntheticLog {
    /// Writes `distinctRPIs` aggregates, in windows of 1,000 spread over the 14 days ending `lastDay`.
    static func write(_ writer: ContactLogWriter, distinctRPIs: Int, lastDay: UTCDay) async throws {
        let synthetic = SyntheticContacts(
            seed: 3, distinctRPIs: distinctRPIs, aggregatesPerWindow: 1000, days: 14, lastDay: lastDay, totalAggregates: distinctRPIs)
        for index in 0..<synthetic.windowCount {
            var (window, records) = synthetic.window(index)
            for item in records.indices {
                records[item].rpi = SyntheticContacts.rpi(seed: 3, number: index * 1000 + item)
            }
            try await writer.append(window: window, aggregates: records)
        }
    }

    /// `count` random keys, each of one of the 14 days ending `lastDay`.
    static func keys(_ count: Int, lastDay: UTCDay, generator: inout SplitMix64) -> [DiagnosisKey] {
        let firstDay = lastDay.advanced(by: -13)
        return (0..<count).map { _ in
            DiagnosisKey(
                key: try! TemporaryExposureKey(
                    keyData: Bytes16(words: (generator.next(), generator.next())),
                    rollingStartIntervalNumber: firstDay.advanced(by: Int64(generator.next() % 14)).firstInterval!),
                reportType: .confirmedTest)
        }
    }
}
