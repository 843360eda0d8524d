// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ContactLog
import ENCore
import GaendConfiguration
import GaendTestSupport
import KeySchedule
import Logging
import Storage
import Testing

/// The driver on a fake back end of the BlueZ kind, with every clock in the test's hands: what
/// bluetoothd's news makes it do (read the adapter, start, silence, forget registrations), the
/// reports its link hands the route, and a lost link connected again after 1 s.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct BeaconDriverTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func bluetoothdsNewsDrivesTheBeaconAndALostLinkComesBack() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let wall = ManualClock(UnixTime.vectorDay.adding(seconds: 10 * 3600))
        let monotonic = TestClock()
        var settings = RadioSettings()
        settings.scanWindowSeconds = 4
        settings.scanInterval = 10...10
        let gate = EnablementGate(enabled: true)
        let status = RadioStatusBoard(logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let context = BeaconContext(
            settings: settings, keys: try KeySchedule(dataDirectory: data, clock: wall, logger: quiet), log: log, clock: wall, gate: gate,
            status: status, logger: quiet, monotonic: monotonic)
        let backend = FakeBackend()
        let driver = BeaconDriver(backend: backend, context: context)
        let running = taskOnOwnThreads { try await driver.run() }
        defer { running.cancel() }

        // The bus is open; bluetoothd not yet seen.
        await until { backend.links.count == 1 && status.reason == "bluetoothd is not on the system bus" }
        let link = backend.links[0]
        link.tell(.ownerChanged(":1.7"))
        await until { backend.radio.advertised.count == 1 && backend.radio.scanning && monotonic.waiting == 1 }
        #expect(link.performed == [.forgetRegistrations, .readAdapter])
        await until { status.status == .active }

        // What the link hands the route lands in the open window.
        let payload = ExposureNotificationPayload(
            rpi: RollingProximityIdentifier(Bytes16(Array(repeating: 7, count: 16))!), aem: AssociatedEncryptedMetadata([7, 1, 2, 3])!)
        await driver.reports.deliver(.sighting(Sighting(payload: payload, rssi: -60, address: BluetoothAddress([1, 2, 3, 4, 5, 0xC6])!)))
        #expect(driver.reports.outsideWindows == 0)

        // Disabled: the window written, advertising and scanning off at the host; the status
        // follows the adapter, which is there and powered.
        gate.set(false)
        await until { !backend.radio.scanning && backend.radio.stops > 0 }
        await until { await log.activity().lastWindowEnd != nil }
        // A report now finds no window: counted.
        await driver.reports.deliver(.sighting(Sighting(payload: payload, rssi: -60, address: BluetoothAddress([1, 2, 3, 4, 5, 0xC6])!)))
        #expect(driver.reports.outsideWindows == 1)

        // bluetoothd leaves: its registrations are forgotten and the status says why.
        link.tell(.ownerChanged(nil))
        await until { status.reason == "bluetoothd is not on the system bus" && link.performed.count == 3 }
        #expect(link.performed.last == .forgetRegistrations)

        // The bus goes: the status says so, and a new link is opened after 1 s, not before.
        link.lose()
        await until { status.reason == "the system bus went away" && monotonic.deadlines == [.seconds(1)] }
        monotonic.advance(by: .milliseconds(999))
        #expect(backend.links.count == 1)
        monotonic.advance(by: .milliseconds(1))
        await until { backend.links.count == 2 }
    }
}
