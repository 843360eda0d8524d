// SPDX-License-Identifier: GPL-3.0-or-later

/// A Temporary Exposure Key with the interval range it was used for: the unit a device keeps in its
/// history, releases as a diagnosis key, and a key server publishes.
public struct TemporaryExposureKey: Hashable, Sendable {
    /// The 16 random bytes.
    public var keyData: Bytes16
    /// The first interval of the key: the UTC midnight interval of the day it was made for.
    public var rollingStartIntervalNumber: ENIntervalNumber
    /// How many intervals from the start the key covers, 1...144; 144 is a whole day. A key released
    /// while still current is cut short to the intervals already past.
    public var rollingPeriod: UInt32

    /// The valid rolling periods.
    public static let rollingPeriods: ClosedRange<UInt32> = 1...ENIntervalNumber.perDay

    /// A key; the rolling period must lie in `1...144`, and the key must end by the last interval
    /// number, so that `end` exists (keys come from files, databases and requests).
    public init(
        keyData: Bytes16, rollingStartIntervalNumber: ENIntervalNumber, rollingPeriod: UInt32 = ENIntervalNumber.perDay
    ) throws(KeyValidationError) {
        guard Self.rollingPeriods.contains(rollingPeriod) else { throw .rollingPeriodOutOfRange(rollingPeriod) }
        guard rollingPeriod <= UInt32.max - rollingStartIntervalNumber.rawValue else {
            throw .endsPastTheLastInterval(start: rollingStartIntervalNumber.rawValue, period: rollingPeriod)
        }
        self.keyData = keyData
        self.rollingStartIntervalNumber = rollingStartIntervalNumber
        self.rollingPeriod = rollingPeriod
    }

    /// The first interval after the key: it is valid in `rollingStartIntervalNumber..<end`.
    public var end: ENIntervalNumber { rollingStartIntervalNumber.advanced(by: Int(rollingPeriod)) }

    /// The intervals the key covers.
    public var intervals: Range<ENIntervalNumber> { rollingStartIntervalNumber..<end }

    /// Whether the key is the one to use during `interval`.
    public func isValid(during interval: ENIntervalNumber) -> Bool { intervals.contains(interval) }

    /// The UTC day of the key's start.
    public var utcDay: UTCDay { rollingStartIntervalNumber.utcDay }
}

/// Why a key's fields were refused.
public enum KeyValidationError: Error, Equatable, Sendable, CustomStringConvertible {
    case rollingPeriodOutOfRange(UInt32)
    case endsPastTheLastInterval(start: UInt32, period: UInt32)

    public var description: String {
        switch self {
        case .rollingPeriodOutOfRange(let period):
            return "rolling period \(period) is outside 1...144"
        case .endsPastTheLastInterval(let start, let period):
            return "rolling start \(start) and period \(period) run past the last interval number, \(UInt32.max)"
        }
    }
}
