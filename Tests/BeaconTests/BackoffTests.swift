// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import Beacon
import Testing

/// The one retry rule of the radio back ends.
@Suite struct BackoffTests {
    @Test func doublesToThirtySecondsAndResets() {
        var backoff = Backoff()
        let waits = (0..<7).map { _ in backoff.next() }
        #expect(waits == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        backoff.reset()
        #expect(backoff.next() == .seconds(1))
    }

    /// Faults less than a minute apart double the wait; a quiet minute starts again at 1 s.
    @Test func faultsBackOffUnlessAMinuteWasQuiet() {
        let clock = TestClock()
        var faults = FaultBackoff(clock: clock)
        #expect(faults.next() == .seconds(1))
        clock.advance(by: .seconds(59))
        #expect(faults.next() == .seconds(2))
        clock.advance(by: .seconds(10))
        #expect(faults.next() == .seconds(4))
        clock.advance(by: .seconds(60))
        #expect(faults.next() == .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(faults.next() == .seconds(2))
    }
}
