// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// One issued test result's codes, as ENVS issues them (pkg/controller/issueapi/gen_code.go,
/// `CommitCode`): one record with a short code and a long code, each with its own expiry. Using
/// either uses both.
package struct IssuedCode: Sendable, Equatable {
    /// Digits, to read out or type.
    package var code: String
    /// Lower-case letters and digits, for a link or an SMS.
    package var longCode: String
    package var expires: UnixTime
    package var longExpires: UnixTime

    /// The answer of ENVS's issue API (pkg/api/api.go `IssueCodeResponse`) with the fields that
    /// apply here: the codes, and each expiry as RFC 1123 text in UTC and as Unix seconds.
    package var responseFields: [String: Any] {
        [
            "code": code, "longCode": longCode,
            "expiresAt": Self.rfc1123(expires), "expiresAtTimestamp": expires.seconds,
            "longExpiresAt": Self.rfc1123(longExpires), "longExpiresAtTimestamp": longExpires.seconds,
        ]
    }

    /// Go's `time.RFC1123` of a UTC time, as ENVS writes expiries: `Mon, 02 Jan 2006 15:04:05 UTC`.
    static func rfc1123(_ time: UnixTime) -> String {
        let seconds = time.seconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = ISO8601.civilDate(daysSinceEpoch: days)
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(month - 1)]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(monthName) \(year) \(two(second / 3600)):\(two(second % 3600 / 60)):\(two(second % 60)) UTC"
    }
}

/// How codes are drawn and how a code a person typed is read.
enum VerificationCode {
    /// ENVS's long-code alphabet (gen_code.go `charset`).
    static let longCodeAlphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    /// What `/api/verify` takes after trimming: both kinds of code at every length `CodeRules` allows.
    static let inputLengths = 6...20

    /// `length` decimal digits, each drawn uniformly (`random(in:)` has no modulo bias), so every
    /// zero-padded number below 10^length is equally likely, as ENVS `GenerateCode`.
    static func shortCode(length: Int, using generator: inout some RandomNumberGenerator) -> String {
        String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    /// `length` characters drawn uniformly from `longCodeAlphabet`, as ENVS `GenerateAlphanumericCode`.
    static func longCode(length: Int, using generator: inout some RandomNumberGenerator) -> String {
        String((0..<length).map { _ in longCodeAlphabet[Int.random(in: 0..<longCodeAlphabet.count, using: &generator)] })
    }

    /// `text` as codes are stored: without surrounding whitespace, ASCII letters in lower case (a
    /// long code copied in capitals still works); nil unless `inputLengths` characters of
    /// [0-9a-z] remain. Other Unicode digits and letters are not codes.
    static func normalized(_ text: String) -> String? {
        let trimmed = text.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }.reversed()
        guard inputLengths.contains(trimmed.count) else { return nil }
        var code = String.UnicodeScalarView()
        for scalar in trimmed {
            switch scalar {
            case "0"..."9", "a"..."z": code.append(scalar)
            case "A"..."Z": code.append(Unicode.Scalar(scalar.value + 32) ?? scalar)
            default: return nil
            }
        }
        return String(code)
    }
}
