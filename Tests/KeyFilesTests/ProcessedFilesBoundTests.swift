// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Storage
import Testing

/// Issue 40, item 8: `processed-key-files` is bounded by what is written, and a file larger than
/// the read limit (an earlier version's) is read from its newest end instead of failing every run.
/// The bounds are a hundredth of gaend's, in the same proportions, so that the test is quick in a
/// debug build (ProcessedFilesDaemonTests runs the real ones on the release gaend).
@Suite(.ownThreads) struct ProcessedFilesBoundTests {
    static let bounds = ProcessedFilesStore.Bounds(entries: 200, writtenBytes: 120 << 10, readBytes: 160 << 10)

    static func url(_ run: Int, _ number: Int) -> String {
        "https://keys.example/" + String(repeating: "a", count: 1_000) + "/\(run)-\(number).zip"
    }

    @Test func runsOfTheLongestIndexStayUnderTheReadLimit() throws {
        let directory = try TemporaryDirectory()
        let store = ProcessedFilesStore(dataDirectory: DataDirectory(path: directory.path), bounds: Self.bounds)
        let start = UnixTime(seconds: 1_800_000_000)
        for run in 0..<3 {
            try store.markProcessed((0..<100).map { Self.url(run, $0) }, at: start.adding(seconds: Int64(run) * 3600))
            let size = try AtomicFile.size(of: store.path)
            #expect(size <= Int64(Self.bounds.writtenBytes), "run \(run): \(size) bytes")
            let loaded = try store.load()
            // The newest run is kept whole; what made room was the oldest.
            #expect((0..<100).allSatisfy { loaded[Self.url(run, $0)] != nil }, "run \(run)")
            if run > 0 { #expect(loaded[Self.url(0, 0)] == nil) }
        }
    }

    @Test func aFileOverTheReadLimitIsReadFromItsNewestEnd() throws {
        let directory = try TemporaryDirectory()
        let store = ProcessedFilesStore(dataDirectory: DataDirectory(path: directory.path), bounds: Self.bounds)
        // What an earlier version could write: 200 long entries, oldest first, past the read bound.
        let text = (0..<200).map { "\(1_800_000_000 + $0)\t\(Self.url(9, $0))\n" }.joined()
        #expect(text.utf8.count > Self.bounds.readBytes)
        try AtomicFile.write(Array(text.utf8), to: store.path)
        let loaded = try store.load()
        #expect(loaded[Self.url(9, 199)] == UnixTime(seconds: 1_800_000_199))
        #expect(loaded[Self.url(9, 0)] == nil)
        #expect(loaded.count > 100)
        // The next run writes it back within the bound.
        try store.markProcessed([Self.url(10, 0)], at: UnixTime(seconds: 1_800_020_000))
        #expect(try AtomicFile.size(of: store.path) <= Int64(Self.bounds.writtenBytes))
    }
}
