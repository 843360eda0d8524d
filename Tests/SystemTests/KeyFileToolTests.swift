// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// `gaenctl tools inspect` and `tools export`, as processes, checked against openssl.
@Suite(.ownThreads) struct KeyFileToolTests {
    static let fixtures: String = {
        var url = URL(fileURLWithPath: #filePath)
        url.deleteLastPathComponent()
        url.deleteLastPathComponent()
        return url.appendingPathComponent("KeyFilesTests/Fixtures").path
    }()

    func fixture(_ name: String) -> String { Self.fixtures + "/" + name }

    @Test func inspectVerifiesAndExitsZeroOnlyForAVerifiedFile() throws {
        let file = fixture("google-ens-testExport-2-records-1-of-1.zip")
        let trusted = ["--public-key", fixture("google-ens-examples-export-public.pem"), "--key-id", "some_id", "--key-version", "1"]
        let run = try ToolRunner.run("gaenctl", ["tools", "inspect", file, "--json"] + trusted)
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let report = try #require((object["files"] as? [[String: Any]])?.first)
        #expect(report["verdict"] as? String == "verified")
        #expect(report["region"] as? String == "US")
        #expect(report["key_count"] as? Int == 2)
        #expect(report["start_timestamp"] as? Int == 1_590_159_600)
        let keys = try #require(report["keys"] as? [[String: Any]])
        #expect(keys.first?["key_data"] as? String == "172fc480e598490c34177604339b1543")
        #expect(keys.first?["rolling_period"] as? Int == 1)

        // Without the key: unknown-key, exit 1. Unsigned: exit 1. Two files, one bad: exit 1.
        #expect(try ToolRunner.run("gaenctl", ["tools", "inspect", file]).status == 1)
        let unsigned = try ToolRunner.run("gaenctl", ["tools", "inspect", fixture("google-ens-1605818700-1605819000-0001-ff23e2-unsigned.zip")])
        #expect(unsigned.status == 1)
        #expect(unsigned.standardOutput.contains("verdict: unsigned"))
        #expect(unsigned.standardOutput.contains("dsos -1"))
        let mixed = try ToolRunner.run("gaenctl", ["tools", "inspect", file, fixture("cwa-android-test-keys.bin.zip")] + trusted)
        #expect(mixed.status == 1)
    }

    @Test func inspectNamesBadArguments() throws {
        let file = fixture("google-ens-testExport-2-records-1-of-1.zip")
        let unpaired = try ToolRunner.run("gaenctl", ["tools", "inspect", file, "--public-key", fixture("cwa-dev-public.pem")])
        #expect(unpaired.status == 2)
        #expect(unpaired.standardError.contains("--public-key: give --public-key, --key-id and --key-version together"))
        let notAKey = try ToolRunner.run(
            "gaenctl", ["tools", "inspect", file, "--public-key", file, "--key-id", "a", "--key-version", "b"])
        #expect(notAKey.status == 2)
        #expect(notAKey.standardError.contains("not a PEM public key"))
        let missing = try ToolRunner.run("gaenctl", ["tools", "inspect", "/nonexistent.zip"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("/nonexistent.zip cannot be read"))
    }

    @Test func exportWritesAFileThatOpensslAndInspectAccept() throws {
        let directory = try TemporaryDirectory()
        let key = directory.path + "/key.pem"
        let publicKey = directory.path + "/public.pem"
        // The signing key is made by openssl, not by gaend.
        #expect(try Self.shell("openssl ecparam -name prime256v1 -genkey -noout -out '\(key)' && openssl ec -in '\(key)' -pubout -out '\(publicKey)'") == 0)
        let keysJSON = directory.path + "/keys.json"
        try Data(
            """
            {"temporaryExposureKeys": [
              {"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": 2700000, "rollingPeriod": 144, "transmissionRisk": 3},
              {"key": "dPCphLzfG4uzXneNimkPRQ==", "rollingStartNumber": 2700144, "rollingPeriod": 60, "reportType": 1, "daysSinceOnsetOfSymptoms": -2}
            ]}
            """.utf8
        ).write(to: URL(fileURLWithPath: keysJSON))
        let out = directory.path + "/out.zip"
        let export = try ToolRunner.run(
            "gaenctl",
            ["tools", "export", "--keys", keysJSON, "--private-key", key, "--key-id", "999", "--key-version", "v7", "--region", "XX", "--out", out])
        #expect(export.status == 0, "\(export.standardError)")

        // openssl verifies the DER signature over the whole export.bin.
        let archive = try KeyFileArchive(zip: [UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        try Data(archive.exportBinary).write(to: URL(fileURLWithPath: directory.path + "/export.bin"))
        try Data(Self.firstSignature(inSignatureList: archive.exportSignature)).write(to: URL(fileURLWithPath: directory.path + "/sig.der"))
        #expect(
            try Self.shell("openssl dgst -sha256 -verify '\(publicKey)' -signature '\(directory.path)/sig.der' '\(directory.path)/export.bin' > /dev/null") == 0
        )

        let inspect = try ToolRunner.run(
            "gaenctl", ["tools", "inspect", out, "--public-key", publicKey, "--key-id", "999", "--key-version", "v7"])
        #expect(inspect.status == 0, "\(inspect.standardOutput)")
        #expect(inspect.standardOutput.contains("region XX"))
        #expect(inspect.standardOutput.contains("2 keys"))
        #expect(inspect.standardOutput.contains("cf60b1f61773d9297167c18482a4d8a4"))  // z2Cx9h... in hex
        #expect(inspect.standardOutput.contains("period 60 trl 0 confirmed-test dsos -2"))
    }

    static let badKeys: [(String, String)] = [
        ("[{\"key\": \"AAAA\", \"rollingStartNumber\": 1}]", "key 0: key must be the base64 of 16 bytes"),
        ("[{\"key\": \"z2Cx9hdz2SlxZ8GEgqTYpA==\"}]", "key 0: rollingStartNumber is missing"),
        (
            "[{\"key\": \"z2Cx9hdz2SlxZ8GEgqTYpA==\", \"rollingStartNumber\": 1, \"rollingPeriod\": 145}]",
            "key 0: rollingPeriod 145 is not an integer in 1...144"
        ),
        ("[{\"key\": \"z2Cx9hdz2SlxZ8GEgqTYpA==\", \"rollingStartNumber\": 1, \"transmissionRisk\": true}]", "key 0: transmissionRisk 1 is not an integer"),
        ("{\"keys\": []}", "expected an array of keys"),
        ("not json", "not JSON"),
    ]

    @Test(arguments: badKeys)
    func exportNamesTheBadKey(json: String, message: String) throws {
        let directory = try TemporaryDirectory()
        let keysJSON = directory.path + "/keys.json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: keysJSON))
        #expect(try Self.shell("openssl ecparam -name prime256v1 -genkey -noout -out '\(directory.path)/key.pem'") == 0)
        let run = try ToolRunner.run(
            "gaenctl",
            [
                "tools", "export", "--keys", keysJSON, "--private-key", directory.path + "/key.pem", "--key-id", "1", "--key-version", "v1",
                "--region", "US", "--out", directory.path + "/out.zip",
            ])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--keys: \(message)"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out.zip"))
    }

    /// Field 1 (TEKSignature) → field 4 (signature) of a TEKSignatureList, read by hand.
    static func firstSignature(inSignatureList bytes: [UInt8]) throws -> [UInt8] {
        func fields(_ bytes: ArraySlice<UInt8>) -> [(Int, ArraySlice<UInt8>)] {
            var result = [(Int, ArraySlice<UInt8>)]()
            var index = bytes.startIndex
            func varint() -> Int {
                var value = 0
                var shift = 0
                while true {
                    let byte = bytes[index]
                    index += 1
                    value |= Int(byte & 0x7F) << shift
                    shift += 7
                    if byte < 0x80 { return value }
                }
            }
            while index < bytes.endIndex {
                let tag = varint()
                switch tag & 7 {
                case 0: _ = varint()
                case 2:
                    let length = varint()
                    result.append((tag >> 3, bytes[index..<(index + length)]))
                    index += length
                default: return result
                }
            }
            return result
        }
        let signature = try #require(fields(bytes[...]).first { $0.0 == 1 }?.1)
        return Array(try #require(fields(signature).first { $0.0 == 4 }?.1))
    }

    static func shell(_ command: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        return process.waitForExit().status
    }
}
