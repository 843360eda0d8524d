// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import GaendAPI
import Foundation
import GaendTestSupport
import Testing
import GaendConfiguration

/// The contract in GaendAPI, as gaend and gaenctl use it: every configuration key from one table,
/// on gaend's command line, in its file and in `config show`; Manager1's property types.
@Suite(.ownThreads) struct ConfigurationKeyTests {
    /// A value every key takes, and one it refuses.
    static let samples: [String: (good: String, bad: String)] = [
        "radio": ("h4+unix:/tmp/x", "hci:0"), "data-dir": ("/var/lib/x", "relative"), "scan-window": ("2.5", "0"),
        "scan-interval": ("continuous", "0-5"), "rotation-interval": ("60-120", "120-60"), "tx-power": ("-8", "21"), "rssi-correction": ("5", "51"),
        "calibration-confidence": ("high", "higher"), "bus": ("session", "ftp:x"), "enable": ("yes", "maybe"), "region": ("CH", "C H"),
        "test-mode": ("0", "2"), "log-level": ("debug", "verbose"), "clock": ("system", "ntp"),
        "exposure-hook": ("/usr/local/libexec/gaend/mail", "hook.sh"), "exposure-hook-timeout": ("30", "0"), "indicator-led": ("ACT", "leds/ACT"),
        "owner-group": ("gaend", "the group"), "download-timeout": ("60", "0"),
        "index-url": ("https://k.example/index.txt", "ftp://k"),
        "export-base-url": ("https://k.example/", "k.example"),
        "export-key": ("310:v1:/etc/k.pem", "310:v1"), "exposure-configuration": ("/etc/c.json", "c.json"), "detection-interval": ("6", "25"),
        "verification-url": ("https://v.example", "v.example"), "verification-api-key": ("key", ""), "publish-url": ("https://p.example", "p"),
        "health-authority-id": ("ch.example", ""),
    ]

    @Test func everyKeyTakesAGoodValueAndRefusesABadOneByName() throws {
        #expect(Set(DaemonConfiguration.keys) == Set(Self.samples.keys))
        for key in DaemonConfiguration.keys {
            let sample = try #require(Self.samples[key])
            var configuration = DaemonConfiguration()
            try configuration.set(key, sample.good)
            // Free text has nothing to refuse.
            if ["verification-api-key", "health-authority-id"].contains(key) { continue }
            #expect { try configuration.set(key, sample.bad) } throws: { ($0 as? DaemonConfigurationError)?.key == key }
        }
    }

    /// `config show` lists every key once, in the table's order (a repeatable key once per value).
    @Test func describedValuesFollowTheTable() throws {
        var configuration = DaemonConfiguration()
        #expect(configuration.describedValues().map(\.key) == DaemonConfiguration.keys.filter { $0 != "export-key" })
        try configuration.set("export-key", "1:v1:/a.pem")
        try configuration.set("export-key", "2:v1:/b.pem")
        #expect(configuration.describedValues().filter { $0.key == "export-key" }.map(\.value) == ["1:v1:/a.pem", "2:v1:/b.pem"])
    }

    @Test func everyPropertySignatureIsAType() throws {
        for property in Manager1.Property.allCases {
            #expect(try DBusType(signature: property.signature).signature == property.signature)
        }
    }

    /// gaend's options are the table's keys: listed in --help, read as --KEY VALUE or --KEY=VALUE,
    /// an unknown one or a bad value refused with exit 2 naming the key.
    @Test func gaendTakesEveryKeyOnItsCommandLine() throws {
        let files = try TemporaryDirectory()
        let empty = files.path + "/gaend.conf"
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        let help = try ToolRunner.run("gaend", ["--help"])
        for key in DaemonConfiguration.keys { #expect(help.standardOutput.contains("--\(key) VALUE"), "\(key) not in gaend --help") }
        let unknown = try ToolRunner.run("gaend", ["--config", empty, "--scan-windw", "2"])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("scan-windw: not a configuration key"), "\(unknown.standardError)")
        let bad = try ToolRunner.run("gaend", ["--config", empty, "--radio=none", "--scan-window=0"])
        #expect(bad.status == 2)
        #expect(bad.standardError.contains("scan-window: '0' is not a number of seconds"))
        let dangling = try ToolRunner.run("gaend", ["--config", empty, "--radio"])
        #expect(dangling.status == 2)
        #expect(dangling.standardError.contains("radio: has no value"))
    }
}
