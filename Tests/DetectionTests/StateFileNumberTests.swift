// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Storage
import Testing

/// The detection's files in the data directory, damaged so that a time no clock shows is in them:
/// the entry is dropped as unreadable instead of trapping when it is turned into milliseconds.
@Suite(.ownThreads) struct StateFileNumberTests {
    static let now = UnixTime(seconds: 1_795_262_400)

    static func data(in directory: TemporaryDirectory) throws -> DataDirectory {
        let data = DataDirectory(path: directory.path + "/data")
        _ = try data.prepare()
        return data
    }

    @Test func detectionStateDropsTimesNoClockShows() throws {
        let directory = try TemporaryDirectory()
        let data = try Self.data(in: directory)
        try #"{"last_detection": 9223372036854775807, "next_detection": 1795262400, "last_error": "x"}"#.write(
            toFile: data.path(of: "detection-state.json"), atomically: true, encoding: .utf8)
        let state = DetectionState.load(from: data)
        #expect(state.lastDetection == nil)
        #expect(state.nextDetection == Self.now)
        #expect(state.lastError == "x")
    }

    @Test func theBudgetDropsTimesNoClockShows() throws {
        let directory = try TemporaryDirectory()
        let data = try Self.data(in: directory)
        let budget = DetectionBudget(dataDirectory: data)
        try "9223372036854775807\n-9223372036854775808\n\(Self.now.seconds - 60)\n".write(toFile: budget.path, atomically: true, encoding: .utf8)
        #expect(budget.load(now: Self.now) == [Self.now.adding(seconds: -60)])
    }

    @Test func processedFilesDropTimesNoClockShows() throws {
        let directory = try TemporaryDirectory()
        let data = try Self.data(in: directory)
        let store = ProcessedFilesStore(dataDirectory: data)
        try "9223372036854775807\thttps://a/1.zip\n\(Self.now.seconds)\thttps://a/2.zip\n".write(toFile: store.path, atomically: true, encoding: .utf8)
        #expect(try store.load() == ["https://a/2.zip": Self.now])
    }
}
