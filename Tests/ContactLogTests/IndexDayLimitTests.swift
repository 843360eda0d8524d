// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Storage
import Testing

/// gaend's retention keeps 14 segments, but a copied or restored directory (`gaenctl tools match
/// --data-dir`) can hold any number of them: every one is indexed (the index once numbered its days
/// in one byte and took the newest 255).
@Suite(.ownThreads) struct IndexDayLimitTests {
    @Test func moreDaysThanAByteCanNumberAreAllIndexed() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [aggregate(1, at: LogFixture.noon)])
        try await writer.sync()
        for back in 1...300 {
            _ = FileManager.default.createFile(atPath: log.segmentPath(LogFixture.day.advanced(by: Int64(-back))), contents: nil)
        }
        let index = try MatchingIndex(reader: log.reader)
        #expect(index.days.count == 301)
        #expect(index.days.first == LogFixture.day.advanced(by: -300))
        #expect(index.days.last == LogFixture.day)
        #expect(index.contains(SyntheticContacts.rpi(seed: 7, number: 1)))
    }
}
