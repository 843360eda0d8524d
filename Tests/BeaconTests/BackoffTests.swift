// SPDX-License-Identifier: GPL-3.0-or-later

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
}
