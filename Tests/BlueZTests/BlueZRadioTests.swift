// SPDX-License-Identifier: GPL-3.0-or-later

import BlueZ
import DBus
import ENCore
import GaendTestSupport
import Foundation
import Synchronization
import Testing

/// `BlueZRadio` against the bluetoothd-like mock: registration (which reads our object back while
/// we wait), re-registration with new data, bluetoothd's refusals, discovery, Release.
@Suite(.ownThreads, .enabled(if: BlueZMockFixture.python != nil, "no dbusmock venv: run `make test-peers` (make check does)"), .timeLimit(.minutes(3)))
struct BlueZRadioTests {
    static let adapter = "/org/bluez/hci0"

    struct Setup {
        let fixture: BlueZMockFixture
        let bus: DBusConnection
        let control: DBusConnection
        let advertisement: AdvertisementObject
        let radio: BlueZRadio
        /// The radio's retry waits, recorded instead of slept.
        let sleeps: RecordingClock
    }

    /// A mock with hci0, our connection with the advertisement exported, and a radio whose retry
    /// waits are recorded instead of slept.
    static func setUp() async throws -> Setup {
        let fixture = try BlueZMockFixture()
        let control = try await DBusConnection.bus(address: fixture.bus.address)
        _ = try await control.call(
            destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: "AddAdapter", [.string("hci0"), .string("gaend test")])
        let bus = try await DBusConnection.bus(address: fixture.bus.address)
        let advertisement = AdvertisementObject()
        try await advertisement.export(on: bus)
        // The mock reads our object back while we register: its calls are answered for the test's life,
        // on threads of the test's own (on the cooperative pool a loaded run starved them past the
        // mock's 15 s read: a NoReply refusal in CI).
        _ = taskOnOwnThreads { await bus.serve() }
        let sleeps = RecordingClock()
        let radio = BlueZRadio(bus: bus, adapterPath: adapter, advertisement: advertisement, clock: sleeps)
        return Setup(fixture: fixture, bus: bus, control: control, advertisement: advertisement, radio: radio, sleeps: sleeps)
    }

    static func frame(_ seed: UInt8) -> ExposureNotificationPayload {
        ExposureNotificationPayload(
            rpi: RollingProximityIdentifier(Bytes16(Array(repeating: seed, count: 16))!), aem: AssociatedEncryptedMetadata([seed, 1, 2, 3])!)
    }

    static func mock(_ setup: Setup, _ member: String, _ arguments: [DBusValue] = [.string("hci0")]) async throws -> [DBusValue] {
        try await setup.control.call(destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: member, arguments)
    }

    /// GetAdvertisements: (sender, path, properties) of each registration.
    static func advertisements(_ setup: Setup) async throws -> [(sender: String, path: String, properties: [String: DBusValue])] {
        try await mock(setup, "GetAdvertisements").first?.arrayElements?.compactMap { entry in
            guard let fields = entry.structureFields, let sender = fields[0].string, let path = fields[1].objectPath, let properties = fields[2].stringKeyed
            else { return nil }
            return (sender, path, properties.mapValues { $0.variant ?? $0 })
        } ?? []
    }

    static func registrationLog(_ setup: Setup) async throws -> [String] {
        try await mock(setup, "GetRegistrationLog").first?.arrayElements?.compactMap { $0.structureFields?.first?.string } ?? []
    }

    @Test func theAdvertisementIsReadBackAndReplacedOnEachAdvertise() async throws {
        let setup = try await Self.setUp()
        let address = BluetoothAddress([0x3A, 0, 0, 0, 0, 1])!
        try await setup.radio.advertise(Self.frame(7), from: address, interval: 0x0140...0x01B0)
        var registered = try await Self.advertisements(setup)
        #expect(registered.count == 1)
        #expect(registered.first?.sender == setup.bus.uniqueName)
        #expect(registered.first?.path == AdvertisementObject.path)
        let properties = try #require(registered.first?.properties)
        #expect(properties["Type"] == .string("broadcast"))
        #expect(properties["ServiceUUIDs"]?.strings == ["FD6F"])
        #expect(properties["ServiceData"]?.stringKeyed?["FD6F"]?.variant?.bytes == Array(repeating: 7, count: 16) + [7, 1, 2, 3])
        #expect(properties["MinInterval"] == .uint32(200))
        #expect(properties["MaxInterval"] == .uint32(270))

        try await setup.radio.advertise(Self.frame(9), from: address, interval: 0x0140...0x01B0)
        registered = try await Self.advertisements(setup)
        #expect(registered.count == 1)
        #expect(registered.first?.properties["ServiceData"]?.stringKeyed?["FD6F"]?.variant?.bytes?.first == 9)
        #expect(try await Self.registrationLog(setup) == ["register", "unregister", "register"])
        try await setup.radio.stopAdvertising()
        #expect(try await Self.advertisements(setup).isEmpty)
    }

    @Test func refusalsAreRetriedAndAPersistentOneIsReported() async throws {
        let setup = try await Self.setUp()
        let address = BluetoothAddress([0x3A, 0, 0, 0, 0, 1])!
        _ = try await Self.mock(
            setup, "FailNextRegistrations", [.string("hci0"), .string("org.bluez.Error.NotPermitted"), .string("Maximum advertisements reached"), .uint32(2)])
        try await setup.radio.advertise(Self.frame(1), from: address, interval: 0x0140...0x01B0)
        #expect(try await Self.advertisements(setup).count == 1)
        // One wait, doubling from 250 ms, per refusal bluetoothd answered: the two injected, and
        // on a loaded machine maybe a read of our object that timed out (CI saw one, before or
        // between them), which the radio must retry the same way. Nothing else.
        let refusals = try #require(try await Self.mock(setup, "GetRegistrationRefusals").first?.strings)
        let injected = "org.bluez.Error.NotPermitted: Maximum advertisements reached"
        let slowRead = "org.bluez.Error.Failed: Failed to complete registration: org.freedesktop.DBus.Error.NoReply"
        #expect(refusals.filter { $0 == injected }.count == 2, "\(refusals)")
        #expect(refusals.allSatisfy { $0 == injected || $0 == slowRead }, "\(refusals)")
        if refusals.count > 2 { print("BlueZRadioTests: refusals not injected, retried: \(refusals.filter { $0 != injected })") }
        let waits = (0..<refusals.count).map { Duration.milliseconds(250 << $0) }
        #expect(setup.sleeps.recorded == waits)

        // Unregistering what bluetoothd no longer has is not an error.
        _ = try await Self.mock(
            setup, "FailNextUnregistrations", [.string("hci0"), .string("org.bluez.Error.DoesNotExist"), .string("Does Not Exist"), .uint32(1)])
        try await setup.radio.advertise(Self.frame(2), from: address, interval: 0x0140...0x01B0)
        #expect(try await Self.advertisements(setup).first?.properties["ServiceData"]?.stringKeyed?["FD6F"]?.variant?.bytes?.first == 2)

        _ = try await Self.mock(
            setup, "FailNextRegistrations", [.string("hci0"), .string("org.bluez.Error.Failed"), .string("Failed to register advertisement"), .uint32(100)])
        await #expect {
            try await setup.radio.advertise(Self.frame(3), from: address, interval: 0x0140...0x01B0)
        } throws: { error in
            guard case .registration(let cause) = error as? BlueZRadioError else { return false }
            return cause.name.rawValue == "org.bluez.Error.Failed"
        }
    }

    @Test func discoveryUsesTheGAENFilterAndStopsCleanly() async throws {
        let setup = try await Self.setUp()
        try await setup.radio.startScanning()
        let sessions = try #require(try await Self.mock(setup, "GetDiscoverySessions").first?.arrayElements)
        #expect(sessions.count == 1)
        let session = try #require(sessions.first?.structureFields)
        #expect(session[0] == .string(setup.bus.uniqueName))
        #expect(session[1] == .boolean(true))
        let filter = try #require(session[2].stringKeyed)
        #expect(filter["Transport"]?.variant == .string("le"))
        #expect(filter["DuplicateData"]?.variant == .boolean(true))
        #expect(filter["UUIDs"]?.variant?.strings?.map { $0.lowercased() } == [BlueZNames.exposureNotificationUUID])
        // Starting again while a session is open restarts it.
        try await setup.radio.startScanning()
        try await setup.radio.stopScanning()
        // Stopping with no session (bluetoothd ended it) is not an error.
        try await setup.radio.stopScanning()
    }

    @Test func releaseIsDelivered() async throws {
        let setup = try await Self.setUp()
        try await setup.radio.advertise(Self.frame(5), from: BluetoothAddress([0x3A, 0, 0, 0, 0, 1])!, interval: 0x0140...0x01B0)
        var releases = setup.advertisement.released.makeAsyncIterator()
        _ = try await Self.mock(setup, "ReleaseAdvertisements")
        await releases.next()
        #expect(try await Self.advertisements(setup).isEmpty)
        #expect(try await Self.registrationLog(setup) == ["register", "release"])
    }
}

/// The template checked against bluetoothd's behaviour by an independent client (dbus-python),
/// so that what the Swift tests rely on is itself tested.
@Suite(.ownThreads, .enabled(if: BlueZMockFixture.python != nil, "no dbusmock venv: run `make test-peers` (make check does)"))
struct BlueZTemplateCheck {
    @Test(.timeLimit(.minutes(3)))
    func theTemplateBehavesLikeBluetoothd() async throws {
        let python = try #require(BlueZMockFixture.python)
        let run = try await ToolRunner.runProgramDetached(
            "/bin/sh", [BumbleFixture.root.appendingPathComponent("testbed/bluez_template_check.sh").path, python])
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardOutput.contains("PASS all"))
    }
}
