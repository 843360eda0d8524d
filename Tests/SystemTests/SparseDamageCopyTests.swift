// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Logging
import Storage
import SystemCalls
import Testing

/// Issue 40, item 16 (the sparse tail), on the release gaend: a segment whose damaged tail is a
/// 300 MB hole is copied aside as a sparse file, not as 300 MB of real disk, and the cut still
/// keeps the good records. Before, the copy wrote every zero.
@Suite(.ownThreads, .timeLimit(.minutes(2)))
struct SparseDamageCopyTests {
    @Test func aSparseDamagedTailIsCopiedAsAHole() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        let now = SystemWallClock().now()
        do {
            let writer = try ContactLogWriter(
                dataDirectory: data, clock: SystemWallClock(), logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            var rssi = RSSISummary()
            rssi.add(-60)
            let seen = now.adding(seconds: -60)
            let aggregate = ContactAggregate(
                rpi: RollingProximityIdentifier(Bytes16(words: (1, 2))), aem: AssociatedEncryptedMetadata((1, 2, 3, 4)), firstSeen: seen,
                lastSeen: seen.adding(seconds: 1), reports: 1, rssi: rssi, previousScanEnd: nil)
            try await writer.append(
                window: ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1, previousScanEnd: nil,
                    monotonicMilliseconds: 4000),
                aggregates: [aggregate])
            try await writer.sync()
        }
        let segment = data.path + "/contacts/\(UTCDay(containing: now)).log"
        let good = try AtomicFile.size(of: segment)
        let hole: Int64 = 300_000_000
        #expect(truncate(segment, off_t(good + hole)) == 0)

        let harness = try ManagerHarness(directory: directory, ["--radio", "none"])
        #expect(harness.stop() == .success)
        let copies = try FileManager.default.contentsOfDirectory(atPath: data.path + "/contacts").filter { $0.contains(".log.damaged-") }
        #expect(copies.count == 1, "\(copies)\n\(harness.stderr)")
        guard let copy = copies.first else { return }
        // Its length and the bytes it takes on disk, as stat(1) reads them.
        let fields = try ToolRunner.runProgram("/usr/bin/stat", ["-c", "%s %b %B", data.path + "/contacts/" + copy]).standardOutput
            .split(separator: " ").compactMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(fields.count == 3)
        let (length, allocated) = (fields[0], fields[1] * fields[2])
        #expect(length == good + hole)
        #expect(allocated < 4 << 20, "\(allocated) bytes on disk for a copy of \(length)")
        #expect(try AtomicFile.size(of: segment) == good)
        print("a 300 MB sparse damaged tail copied aside: \(length) bytes long, \(allocated) bytes on disk")
    }
}
