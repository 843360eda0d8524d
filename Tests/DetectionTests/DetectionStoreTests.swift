// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import GaendTestSupport
import Logging
import Storage
import Testing

/// The one owner of what detection keeps (issue 48): it reads its files once, then answers from
/// memory, and publishes a new snapshot when the configuration, the budget's window or the date
/// moves it.
struct DetectionStoreTests {
    static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    static let v1 = ExposureConfiguration(v1: V1Configuration())
    /// 23:00 UTC.
    static let start = UnixTime.vectorDay.adding(seconds: 23 * 3600)

    func store(in directory: TemporaryDirectory, clock: ManualClock) throws -> DetectionStore {
        let data = DataDirectory(path: directory.path)
        // Two runs counted, the older 23 hours ago; a state as a daemon leaves it.
        try AtomicFile.write(Array("\(Self.start.seconds - 23 * 3600)\n\(Self.start.seconds - 3600)\n".utf8), to: data.path(of: "detection-budget"))
        try AtomicFile.write(
            Array(#"{"last_detection": \#(Self.start.seconds - 3600), "last_error": "x", "next_detection": \#(Self.start.seconds + 600)}"#.utf8),
            to: data.path(of: "detection-state.json"))
        return DetectionStore(
            dataDirectory: data, configuration: .builtIn, configurationURL: nil, schedule: DetectionSchedule(), clock: clock, logger: Self.quiet)
    }

    @Test func whatIsReadOnceIsAnsweredFromMemory() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let store = try store(in: directory, clock: clock)
        let watch = try FileOpenWatch(directory: directory.path)
        let snapshot = await store.current()
        #expect(snapshot.remainingRuns == 4)
        #expect(snapshot.lastDetection == Self.start.adding(seconds: -3600))
        #expect(snapshot.lastError == "x")
        #expect(snapshot.nextDetection == Self.start.adding(seconds: 600))
        #expect(snapshot.budgetRelease == Self.start.adding(seconds: 3600))
        for _ in 0..<100 {
            _ = await store.current()
            _ = await store.nextRun(delay: .seconds(60))
        }
        #expect(store.published == snapshot)
        #expect(watch.opened() == [])
    }

    @Test func theBudgetsWindowTheConfigurationAndMidnightPublish() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let store = try store(in: directory, clock: clock)
        // A v1 configuration: its budget of 20 a day.
        await store.reconfigure(Self.v1, url: nil)
        #expect(store.published.remainingRuns == 18)

        // An hour on, the older run leaves the window, and it is midnight: one more run, a new day.
        clock.set(Self.start.adding(seconds: 3600))
        let snapshot = await store.current()
        #expect(snapshot.remainingRuns == 19)
        #expect(snapshot.budgetRelease == Self.start.adding(seconds: 23 * 3600))
        #expect(snapshot.day == UTCDay(containing: Self.start).advanced(by: 1))

        // Nothing moved: nothing published.
        let quiet = await store.current()
        #expect(quiet == snapshot)
    }
}
