// SPDX-License-Identifier: GPL-3.0-or-later

/// The `Date` header's value (RFC 9110 §5.6.7): IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the
/// one form a server sends today. The obsolete forms (RFC 850, asctime) are not read: a server
/// that sends one is no witness to the clock.
public enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// The time a `Date` value names, or nil when it is not an IMF-fixdate (the weekday must be the
    /// date's, the date a real one).
    public static func parse(_ text: String) -> UnixTime? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, fixed positions.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20, bytes[16] == 0x20,
            bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20, Array(bytes[26...]) == Array("GMT".utf8),
            let weekday = weekdays.firstIndex(of: String(decoding: bytes[0..<3], as: UTF8.self)),
            let monthIndex = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            day >= 1, hour < 24, minute < 60, second < 61
        else { return nil }
        let month = Int64(monthIndex + 1)
        let days = ISO8601.daysSinceEpoch(year: year, month: month, day: day)
        guard ISO8601.civilDate(daysSinceEpoch: days) == (year, month, day) else { return nil }
        // 1970-01-01 was a Thursday (index 3).
        guard ((days % 7) + 7 + 3) % 7 == Int64(weekday) else { return nil }
        return UnixTime(milliseconds: (days * 86_400 + hour * 3600 + minute * 60 + min(second, 59)) * 1000)
    }

    /// `time` as IMF-fixdate (what a server's `Date` carries), to the second.
    public static func format(_ time: UnixTime) -> String {
        let seconds = time.seconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (year, month, day) = ISO8601.civilDate(daysSinceEpoch: days)
        let weekday = weekdays[Int(((days % 7) + 7 + 3) % 7)]
        let clock = ISO8601.format(time).dropFirst(11).prefix(8)
        // Four digits, as the grammar has it (the fuzzer found year 653 written with three).
        let digits = String(year)
        let paddedYear = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return "\(weekday), \(day < 10 ? "0" : "")\(day) \(months[Int(month) - 1]) \(paddedYear) \(clock) GMT"
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
