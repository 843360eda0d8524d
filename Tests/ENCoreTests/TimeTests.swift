// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Testing

@Suite struct TimeTests {
    @Test func intervalNumberOfTheVectorKeyTime() throws {
        // 2020-04-02T00:00:00Z, the official vectors' key time.
        let interval = try #require(ENIntervalNumber(containing: UnixTime(seconds: 1_585_785_600)))
        #expect(interval.rawValue == 2_642_976)
        #expect(interval.rollingStart == interval)
        #expect(interval.utcDay == UTCDay(daysSinceEpoch: 18_354))
        #expect(interval.start == UnixTime(seconds: 1_585_785_600))
        #expect(interval.utcDay.description == "2020-04-02")
    }

    static let intervalCases: [(Int64, UInt32)] = [
        (0, 0), (599, 0), (600, 1), (86_399, 143), (86_400, 144), (1_585_828_801, 2_643_048),
    ]

    @Test(arguments: intervalCases)
    func intervalIsFloorOfTimeOver600(seconds: Int64, expected: UInt32) {
        #expect(ENIntervalNumber(containing: UnixTime(seconds: seconds))?.rawValue == expected)
    }

    @Test func rollingStartIsTheUTCMidnightInterval() throws {
        // A key made at 23:59:59 UTC still starts at that day's midnight, and one made a second later
        // starts 144 intervals on.
        let lastSecond = try #require(ENIntervalNumber(containing: UnixTime(seconds: 1_585_785_600 + 86_399)))
        let nextDay = try #require(ENIntervalNumber(containing: UnixTime(seconds: 1_585_785_600 + 86_400)))
        #expect(lastSecond.rollingStart.rawValue == 2_642_976)
        #expect(nextDay.rollingStart.rawValue == 2_642_976 + 144)
        #expect(lastSecond.utcDay.advanced(by: 1) == nextDay.utcDay)
    }

    @Test func timesOutsideTheIntervalRangeHaveNoInterval() {
        #expect(ENIntervalNumber(containing: UnixTime(milliseconds: -1)) == nil)
        #expect(ENIntervalNumber(containing: UnixTime(seconds: (Int64(UInt32.max) + 1) * 600)) == nil)
        #expect(ENIntervalNumber(containing: UnixTime(seconds: Int64(UInt32.max) * 600))?.rawValue == UInt32.max)
    }

    @Test func negativeTimesRoundDown() {
        #expect(UnixTime(milliseconds: -1).seconds == -1)
        #expect(UTCDay(containing: UnixTime(seconds: -1)).daysSinceEpoch == -1)
        #expect(UTCDay(containing: UnixTime(seconds: 0)).daysSinceEpoch == 0)
    }

    static let isoCases: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (1_582_934_399, "2020-02-28T23:59:59Z"),
        (1_582_934_400, "2020-02-29T00:00:00Z"),
        (1_798_761_599, "2026-12-31T23:59:59Z"),
    ]

    @Test(arguments: isoCases)
    func iso8601(seconds: Int64, text: String) {
        #expect(ISO8601.format(UnixTime(seconds: seconds)) == text)
    }
}

@Suite struct DateParsingTests {
    @Test func parsesAndRoundTripsDays() throws {
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let text = ISO8601.formatDate(daysSinceEpoch: days)
            if days >= -719_162, days < 2_932_897 {  // years 0001...9999 have four digits
                #expect(UTCDay(parsing: text)?.daysSinceEpoch == days, "\(text)")
            }
        }
        #expect(UTCDay(parsing: "2020-04-02")?.daysSinceEpoch == 18_354)
        #expect(UTCDay(parsing: "2020-02-29")?.daysSinceEpoch == 18_321)
    }

    @Test(arguments: ["2021-02-29", "2020-13-01", "2020-00-10", "2020-04-31", "20-04-02", "2020/04/02", "2020-4-02", "", "yyyy-mm-dd"])
    func rejectsWhatIsNotADate(text: String) {
        #expect(UTCDay(parsing: text) == nil)
    }

    /// Seconds from outside: whatever their type, either an instant or nil, never a trap.
    @Test func secondsFromOutsideAreAnInstantOrNil() {
        #expect(UnixTime(exactlySeconds: UInt64(1_585_800_000))?.milliseconds == 1_585_800_000_000)
        #expect(UnixTime(exactlySeconds: Int64(-1))?.milliseconds == -1000)
        #expect(UnixTime(exactlySeconds: Int64.max / 1000)?.milliseconds == Int64.max / 1000 * 1000)
        #expect(UnixTime(exactlySeconds: Int64.min / 1000)?.milliseconds == Int64.min / 1000 * 1000)
        #expect(UnixTime(exactlySeconds: Int64.max / 1000 + 1) == nil)
        #expect(UnixTime(exactlySeconds: Int64.min / 1000 - 1) == nil)
        #expect(UnixTime(exactlySeconds: UInt64.max) == nil)
        #expect(UnixTime(exactlySeconds: Int64.min) == nil)
    }
}
