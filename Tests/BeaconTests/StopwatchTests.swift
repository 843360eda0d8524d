// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Beacon
import Testing

/// The stopwatch scan windows are measured with, and the test clock every time-based test uses.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct StopwatchTests {
    @Test func aStopwatchReadsItsClock() {
        let clock = TestClock()
        let stopwatch = Stopwatch(clock)
        #expect(stopwatch.elapsed == .zero)
        clock.advance(by: .milliseconds(4_250))
        #expect(stopwatch.elapsed == .milliseconds(4_250))
    }

    /// A sleep returns when the test advances past its deadline, not before; cancelled, it throws.
    @Test func aTestClockWakesSleepsWhenAdvanced() async throws {
        let clock = TestClock()
        let sleeping = taskOnOwnThreads { try await clock.sleep(for: .seconds(10)) }
        await until { clock.waiting == 1 }
        clock.advance(by: .seconds(9))
        #expect(clock.waiting == 1)
        clock.advance(by: .seconds(1))
        try await sleeping.value
        #expect(clock.waiting == 0)

        let cancelled = taskOnOwnThreads { try await clock.sleep(for: .seconds(1)) }
        await until { clock.waiting == 1 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.waiting == 0)
    }

    /// What a test starts with `taskOnOwnThreads` runs on the elastic executor's threads, not on
    /// the cooperative pool that every suite's tasks share.
    @Test func theCodeATestStartsRunsOnThreadsOfItsOwn() async throws {
        let name = try await taskOnOwnThreads { try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) }.value
        #expect(name == "test-elastic\n")
    }

    @Test func aRecordingClockRecordsAndStopsAfterItsLimit() async throws {
        let clock = RecordingClock(limit: 2)
        try await clock.sleep(for: .seconds(1))
        try await clock.sleep(for: .seconds(2))
        await #expect(throws: CancellationError.self) { try await clock.sleep(for: .seconds(3)) }
        #expect(clock.recorded == [.seconds(1), .seconds(2), .seconds(3)])
    }
}
