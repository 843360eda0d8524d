// SPDX-License-Identifier: GPL-3.0-or-later

@testable import KeyServer
import Testing

struct SecretComparisonTests {
    @Test func onlyTheSameKeyMatches() {
        #expect(SecretComparison.matches("device-key", "device-key"))
        #expect(!SecretComparison.matches("device-kez", "device-key"))
        #expect(!SecretComparison.matches("device-key-", "device-key"))
        #expect(!SecretComparison.matches("device", "device-key"))
        #expect(!SecretComparison.matches("", "device-key"))
        #expect(!SecretComparison.matches(nil, "device-key"))
        // A prefix padded with what the loop pads with is still another key.
        #expect(!SecretComparison.matches("ab\0", "ab"))
    }
}
