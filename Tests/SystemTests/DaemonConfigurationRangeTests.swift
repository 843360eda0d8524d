// SPDX-License-Identifier: GPL-3.0-or-later

import Testing
import GaendConfiguration

/// `MIN-MAX` values of gaend's configuration, as the option, the file and a reload read them.
@Suite struct DaemonConfigurationRangeTests {
    /// Each once either trapped (an empty split was indexed) or read as another number.
    @Test(arguments: ["-", "", "--", "5-", "-5", "1-2-3", "x-5", "5-x", "9223372036854775808"])
    func aRangeWithoutItsNumbersIsRefusedNamingTheKey(_ value: String) {
        for key in ["rotation-interval", "scan-interval"] {
            var configuration = DaemonConfiguration()
            #expect { try configuration.set(key, value) } throws: { ($0 as? DaemonConfigurationError)?.key == key }
        }
        var configuration = DaemonConfiguration()
        #expect { try configuration.apply(file: "region = CH\nscan-interval = \(value)\n", path: "gaend.conf") } throws: {
            ($0 as? DaemonConfigurationError)?.key == "scan-interval"
        }
    }

    @Test func rangesAndSingleNumbersStillRead() throws {
        var configuration = DaemonConfiguration()
        try configuration.set("rotation-interval", "600-1200")
        try configuration.set("scan-interval", "7")
        let values = Dictionary(configuration.describedValues(), uniquingKeysWith: { first, _ in first })
        #expect(values["rotation-interval"] == "600-1200")
        #expect(values["scan-interval"] == "7-7")
        #expect { try configuration.set("rotation-interval", "9-3") } throws: { ($0 as? DaemonConfigurationError)?.key == "rotation-interval" }
    }
}
