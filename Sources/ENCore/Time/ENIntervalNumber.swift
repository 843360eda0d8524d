// SPDX-License-Identifier: GPL-3.0-or-later

/// The number of a 10-minute interval since the Unix epoch: `floor(unix seconds / 600)`.
///
/// The corresponding value in Apple's framework is `ENIntervalNumber`, a `uint32_t`; the crypto
/// specification encodes it as a little-endian uint32 inside the RPI's padded data, so it is absolute,
/// never relative to a key's start.
public struct ENIntervalNumber: RawRepresentable, Hashable, Comparable, Strideable, Sendable,
    CustomStringConvertible
{
    public var rawValue: UInt32

    /// Seconds in one interval.
    public static let seconds: Int64 = 600
    /// Intervals in one UTC day, and so the rolling period of a full-day key (`TEKRollingPeriod`).
    public static let perDay: UInt32 = 144

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The interval containing `time`, or `nil` for a time before 1970 or after the year 2786,
    /// which no interval number can represent.
    public init?(containing time: UnixTime) {
        let seconds = time.seconds
        guard seconds >= 0 else { return nil }
        let number = seconds / Self.seconds
        guard number <= Int64(UInt32.max) else { return nil }
        rawValue = UInt32(number)
    }

    /// The first interval of this interval's UTC day: `144 × floor(ENIN / 144)`, the rolling start
    /// interval number a key made during this interval gets.
    public var rollingStart: ENIntervalNumber {
        ENIntervalNumber(rawValue: rawValue - rawValue % Self.perDay)
    }

    /// The UTC day the interval lies in.
    public var utcDay: UTCDay { UTCDay(daysSinceEpoch: Int64(rawValue / Self.perDay)) }

    /// The instant the interval begins.
    public var start: UnixTime { UnixTime(seconds: Int64(rawValue) * Self.seconds) }

    public func distance(to other: ENIntervalNumber) -> Int {
        Int(other.rawValue) - Int(rawValue)
    }

    public func advanced(by n: Int) -> ENIntervalNumber {
        ENIntervalNumber(rawValue: UInt32(Int(rawValue) + n))
    }

    public static func < (lhs: ENIntervalNumber, rhs: ENIntervalNumber) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String { String(rawValue) }
}

/// A UTC calendar day, counted from 1970-01-01. GAEN's days (key validity, exposure windows, daily
/// summaries) are always UTC days, never local ones.
public struct UTCDay: Hashable, Comparable, Strideable, Sendable, CustomStringConvertible {
    public var daysSinceEpoch: Int64

    public init(daysSinceEpoch: Int64) {
        self.daysSinceEpoch = daysSinceEpoch
    }

    /// The UTC day containing `time`.
    public init(containing time: UnixTime) {
        let seconds = time.seconds
        daysSinceEpoch = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }

    /// The day written `YYYY-MM-DD`, or `nil` if the text is not a valid date.
    public init?(parsing text: some StringProtocol) {
        guard let days = ISO8601.parseDate(text) else { return nil }
        daysSinceEpoch = days
    }

    /// Midnight UTC at the start of the day.
    public var start: UnixTime { UnixTime(seconds: daysSinceEpoch * 86_400) }

    /// The first interval number of the day, if the day is representable.
    public var firstInterval: ENIntervalNumber? {
        ENIntervalNumber(containing: start)
    }

    public func distance(to other: UTCDay) -> Int64 { other.daysSinceEpoch - daysSinceEpoch }
    public func advanced(by n: Int64) -> UTCDay { UTCDay(daysSinceEpoch: daysSinceEpoch + n) }

    public static func < (lhs: UTCDay, rhs: UTCDay) -> Bool { lhs.daysSinceEpoch < rhs.daysSinceEpoch }

    /// `YYYY-MM-DD`.
    public var description: String { ISO8601.formatDate(daysSinceEpoch: daysSinceEpoch) }
}
