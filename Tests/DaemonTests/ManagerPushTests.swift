// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ContactLog
import DBus
import Daemon
import ENCore
import GaendAPI
import GaendConfiguration
import GaendTestSupport
import KeySchedule
import Logging
import ServiceLifecycleTestKit
import Storage
import Synchronization
import Testing

/// Manager1's properties are pushed by their owners, not polled: a window the log writer writes is
/// announced with no clock moving, and a change by time alone (midnight) is announced when the
/// service's clock reaches it, and not before.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct ManagerPushTests {
    /// The properties announced so far, newest last.
    final class Announcements: Sendable {
        private let changes = Mutex<[[String: DBusValue]]>([])
        func add(_ changed: [String: DBusValue]) { changes.withLock { $0.append(changed) } }
        var all: [[String: DBusValue]] { changes.withLock { $0 } }
        func last(_ property: Manager1.Property) -> DBusValue? { all.last { $0[property.rawValue] != nil }?[property.rawValue] }
    }

    @Test func aWrittenWindowAndMidnightAreAnnouncedWithoutPolling() async throws {
        let bus = try DBusDaemonFixture()
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        // 22:00 UTC: midnight is two hours away.
        let wall = ManualClock(UnixTime.vectorDay.adding(seconds: 22 * 3600))
        let keys = try KeySchedule(dataDirectory: data, clock: wall, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let gate = EnablementGate(enabled: false)
        let status = RadioStatusBoard(logger: quiet)
        let manager = try Manager(
            dataDirectory: data, keys: keys, log: log, worker: nil, radioStatus: status, gate: gate, settings: Manager.Settings(), clock: wall,
            logger: quiet)
        let ticks = TestClock()
        let service = ManagerService(
            manager: manager, bus: .address(bus.address), radioStatus: status, gate: gate, signals: DetectionSignals(),
            notifier: SystemdNotifier(environment: [:]), logger: quiet, ticks: ticks)

        let client = try await DBusConnection.bus(address: bus.address)
        let changes = try await client.signals(
            matching: DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: Manager1.objectPath))
        let announced = Announcements()
        let listener = Task {
            for await message in changes {
                if let changed = message.body.dropFirst().first?.stringKeyed { announced.add(changed.mapValues { $0.variant ?? $0 }) }
            }
        }
        defer { listener.cancel() }

        try await testGracefulShutdown { shutdown in
            let running = Task { try await service.run() }
            // Ready: the service sleeps until midnight on its clock, and nothing else wakes it. The
            // bound is for the first seconds of a full run, when every suite starts at once on two
            // cores and the bus daemon, the connection and the first reads took over 30 s twice.
            try await eventually("the service waiting for midnight", within: .seconds(150)) { ticks.waiting == 1 }
            #expect(ticks.deadlines == [.seconds(2 * 3600)])

            // A window written with one aggregate: SightingsToday and LastScanTime are announced,
            // with the service's clock where it was.
            let now = wall.now()
            let aggregate = ContactAggregate(
                rpi: RollingProximityIdentifier(Bytes16([UInt8](repeating: 7, count: 16))!), aem: AssociatedEncryptedMetadata((1, 2, 3, 4)), firstSeen: now,
                lastSeen: now.adding(seconds: 2), reports: 3, rssi: RSSISummary(maximum: -60, sum: -180, validReports: 3), previousScanEnd: nil)
            try await log.append(
                window: ScanWindowRecord(
                    start: now, end: now.adding(seconds: 4), reports: 3, exposureNotificationReports: 3, aggregates: 1, previousScanEnd: nil,
                    monotonicMilliseconds: 4000),
                aggregates: [aggregate])
            try await eventually("SightingsToday announced") { announced.last(.sightingsToday) == .uint32(1) }
            #expect(announced.last(.lastScanTime) == .uint64(UInt64(now.adding(seconds: 4).seconds)))
            #expect(ticks.now.offset == .zero)

            // Midnight, by time alone: nothing is announced until the service's clock reaches it.
            wall.set(UTCDay(containing: now).start.adding(seconds: 86_400 + 1))
            let before = announced.all.count
            ticks.advance(by: .seconds(2 * 3600 - 1))
            #expect(announced.all.count == before)
            ticks.advance(by: .seconds(1))
            try await eventually("SightingsToday back to 0 after midnight") { announced.last(.sightingsToday) == .uint32(0) }
            // ...and then it waits for the next midnight.
            try await eventually("the service waiting for the next midnight") { ticks.waiting == 1 }

            shutdown.triggerGracefulShutdown()
            try await running.value
        }
    }
}
