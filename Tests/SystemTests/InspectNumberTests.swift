// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// `gaenctl tools inspect` on a signed file whose fixed64 timestamps no calendar holds: it reports
/// them as they are, in text and JSON, instead of trapping on the conversion.
@Suite(.ownThreads) struct InspectNumberTests {
    @Test func timestampsPastTheCalendarArePrintedAsTheyAre() throws {
        let directory = try TemporaryDirectory()
        let signing = try ECDSAPrivateKey()
        let key = try TemporaryExposureKey(keyData: Bytes16(Array(repeating: 7, count: 16))!, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_650_032))
        // The start's milliseconds pass Int64; the end passes Int64 itself.
        let zip = try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(
            KeyExport(startTimestamp: 9_223_372_036_854_776, endTimestamp: UInt64.max, region: "XX", keys: [DiagnosisKey(key: key)]))
        let file = directory.path + "/far.zip"
        try Data(zip).write(to: URL(fileURLWithPath: file))
        try signing.publicKeyPEM.write(toFile: directory.path + "/public.pem", atomically: true, encoding: .utf8)
        let trusted = ["--public-key", directory.path + "/public.pem", "--key-id", "310", "--key-version", "v1"]

        let text = try ToolRunner.run("gaenctl", ["tools", "inspect", file] + trusted)
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("9223372036854776"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("18446744073709551615"), "\(text.standardOutput)")
        let json = try ToolRunner.run("gaenctl", ["tools", "inspect", file, "--json"] + trusted)
        #expect(json.status == 0, "\(json.standardError)")
        #expect(json.standardOutput.contains(#""end_timestamp":18446744073709551615"#), "\(json.standardOutput)")
        #expect(json.standardOutput.contains(#""start_timestamp":9223372036854776"#), "\(json.standardOutput)")
    }
}
