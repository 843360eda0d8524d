// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Testing

@Suite struct KeyTests {
    @Test func rollingPeriodMustBeOneToOneDay() throws {
        let start = ENIntervalNumber(rawValue: 2_642_976)
        #expect(throws: KeyValidationError.rollingPeriodOutOfRange(0)) {
            try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: start, rollingPeriod: 0)
        }
        #expect(throws: KeyValidationError.rollingPeriodOutOfRange(145)) {
            try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: start, rollingPeriod: 145)
        }
        let key = try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: start, rollingPeriod: 3)
        #expect(key.isValid(during: start.advanced(by: 2)))
        #expect(!key.isValid(during: start.advanced(by: 3)))
        #expect(!key.isValid(during: start.advanced(by: -1)))
    }

    /// A key whose intervals would run past the last interval number has no `end`: computing it
    /// trapped, for a key read from a file or a database row.
    @Test func aKeyMustEndWithinTheIntervalNumbers() throws {
        #expect(throws: KeyValidationError.endsPastTheLastInterval(start: UInt32.max - 100, period: 144)) {
            try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32.max - 100), rollingPeriod: 144)
        }
        let last = try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32.max - 144), rollingPeriod: 144)
        #expect(last.end.rawValue == UInt32.max)
    }

    @Test func paddedDataIsPrefixZerosAndLittleEndianInterval() {
        let block = RollingProximityIdentifier.paddedData(for: ENIntervalNumber(rawValue: 2_642_976))
        #expect(block.hex == "454e2d52504900000000000020542800")
    }
}
