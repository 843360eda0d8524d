// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import BlueZ
import ContactLog
import DBus
import ENCore
import Foundation
import GaendConfiguration
import GaendTestSupport
import KeySchedule
import Logging
import Storage
import Testing

/// The beacon's driver over bluetoothd in process: the real driver, back end and session on the
/// bluetoothd-like mock's bus, the scan windows on the test's clock. Every sighting bluetoothd
/// signalled while a window was open is in that window, those signalled just before
/// StopDiscovery's reply included; none is lost unsaid. (Without the drain this passes too: the
/// mock, in Python, signals slower than the scanner takes them. The HCI test, whose controller
/// sends its reports in one write, fails without it.)
@Suite(.ownThreads, .enabled(if: BlueZMockFixture.python != nil, "no dbusmock venv: run `make test-peers` (make check does)"), .timeLimit(.minutes(3)))
struct BlueZDriverTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func sightingsUpToTheStopsReplyAreInTheWindowAndEveryOneIsCounted() async throws {
        let fixture = try BlueZMockFixture()
        let control = try await DBusConnection.bus(address: fixture.bus.address)
        func mock(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
            try await control.call(destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: member, arguments)
        }
        _ = try await mock("AddAdapter", [.string("hci0"), .string("gaend test")])
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let wall = ManualClock(UnixTime.vectorDay.adding(seconds: 10 * 3600))
        let monotonic = TestClock()
        var settings = RadioSettings()
        settings.scanWindowSeconds = 4
        settings.scanInterval = 10...10
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let context = BeaconContext(
            settings: settings, keys: try KeySchedule(dataDirectory: data, clock: wall, logger: quiet), log: log, clock: wall,
            gate: EnablementGate(enabled: true), status: RadioStatusBoard(logger: quiet), logger: quiet, monotonic: monotonic)
        let driver = BeaconDriver(backend: BlueZBackend(adapterIndex: 0, busAddress: fixture.bus.address, logger: quiet), context: context)
        let running = taskOnOwnThreads { try await driver.run() }
        defer { running.cancel() }
        func discovering() async throws -> Bool {
            try await mock("GetDiscoverySessions", [.string("hci0")]).first?.arrayElements?.contains { $0.structureFields?[1] == .boolean(true) } ?? false
        }
        try await eventually("a scan window open") { try await discovering() && monotonic.waiting == 1 }

        // A crowd heard during the window, and more signalled just before StopDiscovery's reply.
        let (during, atTheEdge) = (120, 300)
        for index in 0..<during {
            let rpi = [0xAA] + Array(repeating: UInt8(index & 0xFF), count: 14) + [UInt8(index >> 8)]
            let seen = try await mock(
                "SeeAdvert",
                [
                    .string("hci0"), .string(String(format: "0B:00:00:00:%02X:%02X", index >> 8, index & 0xFF)), .string("random"), .bytes(rpi + [1, 2, 3, 4]),
                    .int16(-70),
                ])
            #expect(seen.first == .boolean(true))
        }
        _ = try await mock("SeeAdvertsWhenStopping", [.string("hci0"), .uint32(UInt32(atTheEdge))])
        wall.advance(seconds: 4)
        monotonic.advance(by: .seconds(4))
        try await eventually("the window written") { await log.activity().lastWindowEnd != nil }

        var windows: [ScanWindowRecord] = []
        try ContactLogReader(dataDirectory: data).forEachRecord(in: nil) { record in
            if case .scanWindow(let window) = record { windows.append(window) }
        }
        #expect(windows.count == 1)
        #expect(windows.first?.exposureNotificationReports == UInt32(during + atTheEdge))
        #expect(windows.first?.aggregates == UInt32(during + atTheEdge))
        // Sent = logged + counted: nothing arrived outside the window.
        #expect(driver.reports.outsideWindows == 0)
        #expect(driver.reports.droppedOnTheWay == 0)
    }
}
