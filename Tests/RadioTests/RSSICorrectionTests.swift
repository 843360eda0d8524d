// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Radio
import Testing

/// The receiver's RSSI correction never turns a reading into "not available" (127), nor wraps.
struct RSSICorrectionTests {
    @Test func aStrongCorrectedReadingStaysAReading() {
        #expect(Scanner.corrected(120, by: 20) == 126)
        #expect(Scanner.corrected(110, by: 16) == 126)
        #expect(Scanner.corrected(100, by: 26) == 126)
        #expect(Scanner.corrected(-120, by: -20) == -127)
        #expect(Scanner.corrected(-60, by: 5) == -55)
    }

    @Test func notAvailableStaysNotAvailable() {
        #expect(Scanner.corrected(RSSISummary.notAvailable, by: -10) == RSSISummary.notAvailable)
    }
}
