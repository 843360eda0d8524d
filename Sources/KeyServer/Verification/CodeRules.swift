// SPDX-License-Identifier: GPL-3.0-or-later

/// How long verification codes are and how long they live, within the bounds ENVS puts on a
/// realm (pkg/database/realm.go `Validate`): a short code to read out or type, of digits; a long
/// code for a link or an SMS, of lower-case letters and digits. Only values inside the bounds can
/// be made, so a `Verifier` never issues a code its own `/api/verify` would refuse.
package struct CodeRules: Sendable, Equatable {
    /// A value outside its bounds, named as the initializer's parameter.
    package struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// ENVS: at least 6 (`MinCodeLength`); at most what `/api/verify` accepts.
    package static let lengths = 6...VerificationCode.inputLengths.upperBound
    /// ENVS: at least 12; at most what `/api/verify` accepts.
    package static let longLengths = 12...VerificationCode.inputLengths.upperBound
    /// ENVS: at most 60 minutes (`DefaultMaxShortCodeMinutes`); a minute at least, or nobody can use it.
    package static let lifetimes: ClosedRange<Int64> = 60...3600
    /// ENVS: at most 24 hours (`maxLongCodeDuration`).
    package static let longLifetimes: ClosedRange<Int64> = 60...86_400

    /// Digits; ENVS `DefaultShortCodeLength`.
    package private(set) var length = 8
    /// Seconds; ENVS `DefaultShortCodeExpirationMinutes`.
    package private(set) var lifetime: Int64 = 15 * 60
    /// Characters; ENVS `DefaultLongCodeLength`.
    package private(set) var longLength = 16
    /// Seconds; ENVS `DefaultLongCodeExpirationHours`.
    package private(set) var longLifetime: Int64 = 24 * 3600

    /// ENVS's defaults: 8 digits for 15 minutes, 16 characters for 24 hours.
    package init() {}

    package init(length: Int, lifetime: Int64, longLength: Int, longLifetime: Int64) throws(Invalid) {
        func check<Value: Comparable>(_ value: Value, _ range: ClosedRange<Value>, _ name: String) throws(Invalid) {
            guard range.contains(value) else { throw Invalid(message: "\(name) \(value) is outside \(range.lowerBound)...\(range.upperBound)") }
        }
        try check(length, Self.lengths, "length")
        try check(lifetime, Self.lifetimes, "lifetime")
        try check(longLength, Self.longLengths, "longLength")
        try check(longLifetime, Self.longLifetimes, "longLifetime")
        self.length = length
        self.lifetime = lifetime
        self.longLength = longLength
        self.longLifetime = longLifetime
    }
}
