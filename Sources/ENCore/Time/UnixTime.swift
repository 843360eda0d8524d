// SPDX-License-Identifier: GPL-3.0-or-later

/// A wall-clock instant: milliseconds since 1970-01-01T00:00:00Z, leap seconds ignored as POSIX does.
///
/// Everything GAEN stores or compares across devices (interval numbers, UTC days, sighting times) is
/// wall-clock time. Durations measured on this device come from a monotonic clock instead.
public struct UnixTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// For seconds this program made (a clock, its own arithmetic): past ±292 million years the
    /// product traps. Seconds from outside take `init?(exactlySeconds:)`.
    public init(seconds: Int64) {
        self.milliseconds = seconds * 1000
    }

    /// Seconds from a caller, a file or the network (a D-Bus uint64, a stored Int64, a fixed64):
    /// `nil` when they are no instant this type holds, as `ENIntervalNumber(containing:)` is for
    /// instants no interval number holds.
    public init?(exactlySeconds seconds: some BinaryInteger) {
        guard let whole = Int64(exactly: seconds) else { return nil }
        let (product, overflow) = whole.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        self.milliseconds = product
    }

    /// Whole seconds, rounded towards negative infinity.
    public var seconds: Int64 {
        milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
    }

    public func adding(seconds: Int64) -> UnixTime {
        UnixTime(milliseconds: milliseconds + seconds * 1000)
    }

    public static func < (lhs: UnixTime, rhs: UnixTime) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    public var description: String { ISO8601.format(self) }
}

/// Where the current wall-clock time comes from. Production reads the system clock; tests set it.
public protocol WallClock: Sendable {
    func now() -> UnixTime
    /// Why `now()` may not be trusted for what outlives this moment (a key broadcast, a record
    /// filed, data deleted as expired), or nil when it may. A clock says nil unless it knows better.
    var distrust: String? { get }
}

extension WallClock {
    public var distrust: String? { nil }
}

/// Civil-calendar formatting of `UnixTime` in UTC, without Foundation.
public enum ISO8601 {
    /// `YYYY-MM-DDTHH:MM:SSZ` (milliseconds are dropped).
    public static func format(_ time: UnixTime) -> String {
        let seconds = time.seconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2))Z"
    }

    /// `YYYY-MM-DD` of a day number.
    public static func formatDate(daysSinceEpoch days: Int64) -> String {
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// Proleptic Gregorian date of a day number (Howard Hinnant's `civil_from_days`).
    public static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The day number of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    public static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Parses `YYYY-MM-DD` strictly: four, two and two digits, a real calendar date.
    public static func parseDate(_ text: some StringProtocol) -> Int64? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in utf8[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            (1...12).contains(month), day >= 1
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        // Reject 2021-02-30 and the like: the date must survive the round trip.
        guard civilDate(daysSinceEpoch: days) == (year, month, day) else { return nil }
        return days
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
