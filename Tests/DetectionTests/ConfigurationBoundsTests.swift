// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import Foundation
import GaendTestSupport
import Testing

/// Issue 40, item 16: a configuration with a key twice says two things, and a configuration file is
/// read no further than its limit.
@Suite(.ownThreads) struct ConfigurationBoundsTests {
    @Test(arguments: [
        (#"{"immediateDurationWeight":100, "immediateDurationWeight":50}"#, "immediateDurationWeight", "$"),
        // The same key, spelled with an escape.
        (#"{"nearDurationWeight":100, "near\u0044urationWeight":50}"#, "nearDurationWeight", "$"),
        (#"{"v2":{"reportTypeNoneMap":1, "reportTypeNoneMap":2}}"#, "reportTypeNoneMap", "$.v2"),
        (#"{"list":[{"a":1}, {"b":1, "b":2}]}"#, "b", "$.list[1]"),
    ])
    func aKeyTwiceIsRefusedByName(_ json: String, _ key: String, _ path: String) {
        #expect {
            try ExposureConfiguration(json: Data(json.utf8))
        } throws: { error in
            "\(error)".contains(key) && "\(error)".contains("twice in \(path)")
        }
    }

    @Test func keysOnceInEachObjectAreFine() throws {
        // Every authority's published configuration (AuthorityConfigurationTests) parses as well:
        // nested objects and arrays, each key once in its object.
        _ = try ExposureConfiguration(json: Data(ConfigurationTests.appleV2.utf8))
    }

    @Test func aFileIsReadNoFurtherThanTheLimit() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/huge.json"
        // 300 MB sparse: read whole it would cost 300 MB; only the limit and a byte are read.
        let handle = try #require(
            FileHandle(
                forWritingAtPath: {
                    FileManager.default.createFile(atPath: path, contents: nil); return path
                }()))
        try handle.truncate(atOffset: 300 << 20)
        try handle.close()
        #expect {
            try ExposureConfiguration(contentsOf: path)
        } throws: { error in
            "\(error)".contains("more than \(ExposureConfiguration.maximumBytes) bytes")
        }
        #expect(try ExposureConfiguration(contentsOf: directory.path + "/missing.json") == nil)
    }
}
