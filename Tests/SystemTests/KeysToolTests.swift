// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeySchedule
import Logging
import Storage
import Testing

/// `gaenctl tools keys` on a data directory that a real `KeySchedule` wrote.
@Suite(.ownThreads) struct KeysToolTests {
    let directory: TemporaryDirectory
    let data: DataDirectory

    init() throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.path + "/gaend")
    }

    func makeHistory() async throws -> [HistoryKey] {
        let clock = ManualClock(.vectorDay.adding(seconds: 600))
        let schedule = try KeySchedule(
            dataDirectory: data, clock: clock, random: CountingRandom(),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        _ = try await schedule.currentKey()
        clock.advance(seconds: 86_400 + 3600)
        _ = try await schedule.currentKey()
        _ = try await schedule.releaseDiagnosisKeys()
        return await schedule.history()
    }

    @Test func listsTheStoredHistoryAndChangesNothing() async throws {
        let history = try await makeHistory()
        let path = data.path(of: KeyHistoryFile.name)
        let before = try AtomicFile.read(path, limit: 1 << 20)
        let entriesBefore = try FileManager.default.contentsOfDirectory(atPath: data.path)

        let run = try ToolRunner.run("gaenctl", ["tools", "keys", "--data-dir", data.path, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let keys = try #require(object["keys"] as? [[String: Any]])
        #expect(keys.count == history.count)
        for (printed, stored) in zip(keys, history) {
            #expect(printed["key_data"] as? String == stored.key.keyData.hex)
            #expect(printed["rolling_start_interval_number"] as? Int == Int(stored.key.rollingStartIntervalNumber.rawValue))
            #expect(printed["rolling_period"] as? Int == Int(stored.key.rollingPeriod))
            #expect(printed["shortened_by_release"] as? Bool == stored.shortenedByRelease)
        }
        // Released at 01:10 UTC: seven whole intervals of the second day were over.
        #expect(history.map(\.key.rollingPeriod) == [144, 7, 144])

        let text = try ToolRunner.run("gaenctl", ["tools", "keys", "--data-dir", data.path])
        #expect(text.status == 0)
        #expect(text.standardOutput.contains(history[1].key.keyData.hex))
        #expect(text.standardOutput.contains("shortened by release"))

        // Read-only: same bytes, same entries.
        #expect(try AtomicFile.read(path, limit: 1 << 20) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == entriesBefore)
    }

    @Test func anEmptyDirectoryHasNoKeys() throws {
        try data.prepare()
        let run = try ToolRunner.run("gaenctl", ["tools", "keys", "--data-dir", data.path])
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("no keys"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).isEmpty)
    }

    @Test func aMissingDirectoryFailsNamingIt() throws {
        let run = try ToolRunner.run("gaenctl", ["tools", "keys", "--data-dir", directory.path + "/nowhere"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("--data-dir: \(directory.path)/nowhere does not exist"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/nowhere"))
    }

    @Test func aDamagedHistoryFailsWithTheReason() async throws {
        _ = try await makeHistory()
        try AtomicFile.write(Array("not a key history".utf8), to: data.path(of: KeyHistoryFile.name))
        let run = try ToolRunner.run("gaenctl", ["tools", "keys", "--data-dir", data.path])
        #expect(run.status == 1)
        #expect(run.standardError.contains("unreadable"))
    }
}
