// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Testing

/// Issue 48: when detection may and will run, one pure type tested by tables (the worker wrote
/// the runs-per-day rule four times).
@Suite struct DetectionScheduleTests {
    static let now = UnixTime(seconds: 1_800_000_000)
    static let v2 = ExposureConfiguration(v2: V2Configuration())
    static let v1 = ExposureConfiguration(v1: V1Configuration())

    @Test(arguments: [
        // (mode, runs counted, runs left)
        (v2, 0, 6), (v2, 5, 1), (v2, 6, 0), (v2, 9, 0), (v1, 0, 20), (v1, 6, 14), (v1, 20, 0),
    ])
    func theBudgetIsTheModes(configuration: ExposureConfiguration, counted: Int, left: Int) {
        #expect(DetectionSchedule().remaining(counted: counted, configuration) == left)
    }

    /// (runs counted, seconds before now; limit; next allowed in seconds from now, or nil)
    static let allowed: [(ago: [Int64], limit: Int, next: Int64?)] = [
        ([], 6, nil), ([82_800, 3600], 6, nil), ([82_800, 72_000, 10, 9, 8, 7], 6, 3600), ([82_800, 72_000, 10, 9, 8, 7], 5, 14_400),
        ([100], 0, nil),
    ]

    @Test func theNextRunIsADayAfterTheOneItWouldReplace() {
        for row in Self.allowed {
            let runs = row.ago.map { Self.now.adding(seconds: -$0) }
            #expect(DetectionSchedule.nextAllowed(counted: runs, limit: row.limit) == row.next.map { Self.now.adding(seconds: $0) }, "\(row)")
        }
    }

    @Test(arguments: [
        // (interval, jitter, offset drawn, delay)
        (14_400, 900, 0, 14_400), (14_400, 900, -900, 13_500), (14_400, 900, 900, 15_300), (14_400, 900, 5_000, 15_300),
        (14_400, 900, -5_000, 13_500), (14_400, 0, 700, 14_400),
    ])
    func theTimerMovesByItsJitterOnly(interval: Int64, jitter: Int64, offset: Int64, delay: Int64) {
        let schedule = DetectionSchedule(interval: .seconds(interval), jitter: .seconds(jitter))
        #expect(schedule.timerDelay(offset: offset) == .seconds(delay))
        #expect(schedule.jitterSeconds == (jitter > 0 ? -jitter...jitter : nil))
    }

    /// A spent budget moves the timer's run to when a run is allowed; otherwise the delay stands.
    @Test func aSpentBudgetMovesTheTimersRun() {
        let schedule = DetectionSchedule()
        let sixRuns = (0..<6).map { Self.now.adding(seconds: -3600 + Int64($0)) }
        #expect(schedule.nextRun(now: Self.now, delay: .seconds(600), counted: [], Self.v2) == Self.now.adding(seconds: 600))
        #expect(schedule.nextRun(now: Self.now, delay: .seconds(600), counted: sixRuns, Self.v2) == Self.now.adding(seconds: 86_400 - 3600))
        // In v1 mode the same six runs leave fourteen.
        #expect(schedule.nextRun(now: Self.now, delay: .seconds(600), counted: sixRuns, Self.v1) == Self.now.adding(seconds: 600))
    }
}
