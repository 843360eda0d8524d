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

    @Test func paddedDataIsPrefixZerosAndLittleEndianInterval() {
        let block = RollingProximityIdentifier.paddedData(for: ENIntervalNumber(rawValue: 2_642_976))
        #expect(block.hex == "454e2d52504900000000000020542800")
    }
}
