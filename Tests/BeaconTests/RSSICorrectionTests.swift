// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Beacon
import Testing

/// The receiver's RSSI correction never turns a reading into "not available" (127), nor wraps.
struct RSSICorrectionTests {
    @Test func aStrongCorrectedReadingStaysAReading() {
        #expect(ScanWindowAggregator.corrected(120, by: 20) == 126)
        #expect(ScanWindowAggregator.corrected(110, by: 16) == 126)
        #expect(ScanWindowAggregator.corrected(100, by: 26) == 126)
        #expect(ScanWindowAggregator.corrected(-120, by: -20) == -127)
        #expect(ScanWindowAggregator.corrected(-60, by: 5) == -55)
    }

    @Test func notAvailableStaysNotAvailable() {
        #expect(ScanWindowAggregator.corrected(RSSISummary.notAvailable, by: -10) == RSSISummary.notAvailable)
    }
}
