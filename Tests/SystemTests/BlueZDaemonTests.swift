// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import DBus
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import Glibc
import KeySchedule
import Storage
import Testing
import SystemCalls

/// `gaend --radio bluez:hci0` against the bluetoothd-like mock on a private bus: what it registers,
/// what it logs of injected sightings, and how it rides out power cycles, refusals, Release and
/// bluetoothd restarting under it.
@Suite(.ownThreads, .enabled(if: BlueZMockFixture.python != nil, "no dbusmock venv: run `make test-peers` (make check does)"))
struct BlueZDaemonTests {
    static let vectorPayload: [UInt8] = [
        0x8b, 0xe6, 0xcd, 0x37, 0x1c, 0x5c, 0x89, 0x16, 0x04, 0xbf, 0xbe, 0x49, 0xdf, 0x84, 0x50, 0x96, 0x72, 0x03, 0x38, 0x74,
    ]

    /// The daemon, its control connection and its standard error.
    struct Harness {
        let fixture: BlueZMockFixture
        let control: DBusConnection
        let daemon: Process
        let directory: TemporaryDirectory

        var stderr: String { (try? String(contentsOfFile: "\(directory.path)/stderr", encoding: .utf8)) ?? "" }

        func mock(_ member: String, _ arguments: [DBusValue] = [.string("hci0")]) async throws -> [DBusValue] {
            try await control.call(destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: member, arguments)
        }

        func registrationLog() async throws -> [String] {
            try await mock("GetRegistrationLog").first?.arrayElements?.compactMap { $0.structureFields?.first?.string } ?? []
        }

        func advertisedServiceData() async throws -> [[UInt8]] {
            try await mock("GetAdvertisements").first?.arrayElements?.compactMap {
                $0.structureFields?[2].stringKeyed?["ServiceData"]?.variant?.stringKeyed?["FD6F"]?.variant?.bytes
            } ?? []
        }

        func discoveringClients() async throws -> Int {
            try await mock("GetDiscoverySessions").first?.arrayElements?.filter { $0.structureFields?[1] == .boolean(true) }.count ?? 0
        }

        func setPowered(_ on: Bool) async throws {
            _ = try await control.call(
                destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "Set",
                [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.boolean(on))])
        }

        /// SeeAdvert until a discovery session takes it (windows open and close; between them the
        /// mock answers NotDiscovering).
        func see(_ address: String, rssi: Int16) async throws {
            try await waitUntil("a discovery session to take a sighting") {
                do {
                    return try await mock("SeeAdvert", [.string("hci0"), .string(address), .string("random"), .bytes(vectorPayload), .int16(rssi)]).first
                        == .boolean(true)
                } catch {
                    return false
                }
            }
        }

        /// `eventually`, with what gaend wrote to stderr if it never happens.
        func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
            try await eventually(what, explain: { "gaend said:\n\(stderr)" }, condition)
        }

        func occurrences(_ text: String) -> Int { stderr.components(separatedBy: text).count - 1 }
    }

    static func start() async throws -> Harness {
        let fixture = try BlueZMockFixture()
        let control = try await DBusConnection.bus(address: fixture.bus.address)
        _ = try await control.call(
            destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: "AddAdapter", [.string("hci0"), .string("gaend test")])
        let directory = try TemporaryDirectory()
        let daemon = Process()
        daemon.executableURL = try ToolRunner.productsDirectory().appendingPathComponent("gaend")
        daemon.arguments = [
            "--clock", "system", "--radio", "bluez:hci0", "--enable", "true", "--data-dir", "\(directory.path)/data", "--scan-window", "0.5", "--scan-interval",
            "1-1",
            "--rotation-interval", "2-2",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = fixture.bus.address
        daemon.environment = environment
        daemon.standardOutput = FileHandle.nullDevice
        let path = "\(directory.path)/stderr"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        daemon.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try daemon.run()
        return Harness(fixture: fixture, control: control, daemon: daemon, directory: directory)
    }

    @Test(.timeLimit(.minutes(4)))
    func theDaemonAdvertisesAndScansThroughBluetoothd() async throws {
        let harness = try await Self.start()
        defer { if harness.daemon.isRunning { kill(harness.daemon.processIdentifier, SIGKILL) } }

        // The advertisement: the RPI of the current interval under the stored TEK, and its AEM.
        try await harness.waitUntil("the advertisement") { try await !harness.advertisedServiceData().isEmpty }
        let serviceData = try #require(try await harness.advertisedServiceData().first)
        #expect(serviceData.count == 20)
        let key = try #require(try KeyHistoryFile.read(DataDirectory(path: "\(harness.directory.path)/data").path(of: KeyHistoryFile.name))?.keys.last?.key)
        let crypto = try ExposureKeyCrypto()
        let (rpik, _) = crypto.keys(for: key.keyData)
        let now = try #require(ENIntervalNumber(containing: SystemWallClock().now()))
        let candidates = [now.rawValue - 1, now.rawValue].map { crypto.rpi(rpik: rpik, interval: ENIntervalNumber(rawValue: $0)).bytes.bytes }
        #expect(candidates.contains(Array(serviceData.prefix(16))))

        // Rotation (every 2 s): unregistered and registered again.
        try await harness.waitUntil("a rotation") { try await harness.registrationLog().count >= 3 }
        #expect(try await harness.registrationLog().prefix(3) == ["register", "unregister", "register"])

        // Sightings: the first of an address arrives as InterfacesAdded, later ones as
        // PropertiesChanged (or InterfacesAdded again in a new discovery session); RSSI 127 is "not
        // available"; a device of another service is not logged.
        _ = try await harness.mock("AddDevice", [.string("hci0"), .string("11:22:33:44:55:66"), .string("headphones")])
        try await harness.see("3A:5B:7C:9D:1E:2F", rssi: -67)
        try await harness.see("3A:5B:7C:9D:1E:2F", rssi: -71)
        try await harness.see("3A:5B:7C:9D:1E:2F", rssi: 127)

        // Power off: the radio stops (status bluetooth-off), discovery ends; on again: it resumes.
        let registrationsBefore = try await harness.registrationLog().count
        try await harness.setPowered(false)
        try await harness.waitUntil("bluetooth-off") { harness.stderr.contains("reason=adapter hci0 is powered off status=bluetooth-off") }
        #expect(try await harness.discoveringClients() == 0)
        let activeBefore = harness.occurrences("status=active")
        try await harness.setPowered(true)
        try await harness.waitUntil("active again") { harness.occurrences("status=active") > activeBefore }
        try await harness.waitUntil("discovery again") { try await harness.discoveringClients() == 1 }
        #expect(try await harness.registrationLog().count > registrationsBefore)

        // bluetoothd refuses twice ("Maximum advertisements reached"), then accepts. (Counted from
        // here: the registration after power-on may itself have been retried, under a sanitizer's
        // load once, bluetoothd saying it still had the old one.)
        let retriedBefore = harness.occurrences("advertisement registered after retries")
        _ = try await harness.mock(
            "FailNextRegistrations", [.string("hci0"), .string("org.bluez.Error.NotPermitted"), .string("Maximum advertisements reached"), .uint32(2)])
        try await harness.waitUntil("registration after refusals") {
            harness.occurrences("advertisement registered after retries") > retriedBefore && harness.stderr.contains("Maximum advertisements reached")
        }
        // ...and says an unregistration is of nothing ("Does Not Exist").
        _ = try await harness.mock(
            "FailNextUnregistrations", [.string("hci0"), .string("org.bluez.Error.DoesNotExist"), .string("Does Not Exist"), .uint32(1)])
        let afterDoesNotExist = try await harness.registrationLog().count
        try await harness.waitUntil("rotations after Does Not Exist") { try await harness.registrationLog().count >= afterDoesNotExist + 2 }

        // Release: registered again. Between a rotation's unregister and register nothing is
        // registered and the mock releases nothing, so it is asked until it has released one.
        try await harness.waitUntil("a release") {
            _ = try await harness.mock("ReleaseAdvertisements")
            return try await harness.registrationLog().contains("release")
        }
        try await harness.waitUntil("registration after Release") { try await harness.registrationLog().drop { $0 != "release" }.contains("register") }
        #expect(harness.stderr.contains("bluetoothd released the advertisement; registering again"))

        // bluetoothd restarts under the daemon: everything is registered with the new one.
        harness.fixture.stop()
        try await harness.waitUntil("bluetoothd gone") { harness.stderr.contains("reason=bluetoothd is not on the system bus status=bluetooth-off") }
        try harness.fixture.start()
        _ = try await harness.mock("AddAdapter", [.string("hci0"), .string("gaend test")])
        try await harness.waitUntil("advertising on the new bluetoothd") { try await !harness.advertisedServiceData().isEmpty }
        try await harness.waitUntil("discovery on the new bluetoothd") { try await harness.discoveringClients() == 1 }
        try await harness.see("3A:5B:7C:9D:1E:2F", rssi: -60)

        // SIGTERM: exit 0, the advertisement unregistered, the window flushed.
        kill(harness.daemon.processIdentifier, SIGTERM)
        #expect(harness.daemon.waitForExit() == .success)
        #expect(try await harness.advertisedServiceData().isEmpty)
        let data = DataDirectory(path: "\(harness.directory.path)/data")
        #expect(try ContactLogReader(dataDirectory: data).verify().isIntact)
        var heard = [ContactAggregate]()
        try ContactLogReader(dataDirectory: data).forEachRecord { record in
            if case .aggregate(let aggregate) = record { heard.append(aggregate) }
        }
        #expect(heard.allSatisfy { $0.rpi.bytes.bytes == Array(Self.vectorPayload.prefix(16)) && $0.aem.array == Array(Self.vectorPayload.suffix(4)) })
        let reports = heard.reduce(0) { $0 + Int($1.reports) }
        let validReports = heard.reduce(0) { $0 + Int($1.rssi.validReports) }
        let sum = heard.reduce(0) { $0 + Int($1.rssi.sum) }
        #expect(reports == 4)
        // The four sightings bluetoothd signalled are all logged, none outside a window (issue 37).
        let counts = FloodCountTests.countsAtStop(in: harness.stderr)
        #expect(counts?.outside == 0 && counts?.dropped == 0, "\(harness.stderr)")
        #expect(validReports == 3)
        #expect(sum == -198)
        #expect(heard.compactMap(\.rssi.maximum).max() == -60)
    }
}

/// Manager1's radio properties follow bluetoothd (the mock) and SetEnabled.
@Suite(.ownThreads, .enabled(if: BlueZMockFixture.python != nil, "no dbusmock venv: run `make test-peers` (make check does)"))
struct ManagerRadioTests {
    @Test(.timeLimit(.minutes(3)))
    func statusFollowsTheAdapterAndTheOwnersChoice() async throws {
        let mock = try BlueZMockFixture()
        let control = try await DBusConnection.bus(address: mock.bus.address)
        func mockCall(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
            try await control.call(destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: member, arguments)
        }
        _ = try await mockCall("AddAdapter", [.string("hci0"), .string("gaend test")])
        let harness = try ManagerHarness(bus: mock.bus, ["--radio", "bluez:hci0", "--scan-window", "0.5", "--scan-interval", "1-1"])
        func status() throws -> String { try harness.status()["status"] as? String ?? "" }
        func advertisements() async throws -> Int { try await mockCall("GetAdvertisements", [.string("hci0")]).first?.arrayElements?.count ?? -1 }
        func discovering() async throws -> Int {
            try await mockCall("GetDiscoverySessions", [.string("hci0")]).first?.arrayElements?.filter { $0.structureFields?[1] == .boolean(true) }.count ?? -1
        }

        // Never enabled: nothing on the air.
        #expect(try status() == "disabled")
        #expect(try harness.status()["status_reason"] as? String == "Exposure Notification is turned off (gaenctl enable turns it on)")
        #expect(try await advertisements() == 0)
        let watchOutput = harness.directory.path + "/watch.out"
        let watch = try ManagerDaemonTests.startWatch(harness, output: watchOutput, count: nil)
        defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
        #expect(try harness.ctl(["enable"]).status == 0)
        try await eventually("active") { try status() == "active" }
        #expect(try harness.status()["advertising"] as? Bool == true)
        #expect(try harness.status()["status_reason"] is NSNull)
        #expect(try await advertisements() == 1)

        // A sighting shows in SightingsToday and LastScanTime.
        for _ in 0..<300 {
            let seen = try? await mockCall(
                "SeeAdvert", [.string("hci0"), .string("3A:5B:7C:9D:1E:2F"), .string("random"), .bytes(BlueZDaemonTests.vectorPayload), .int16(-60)])
            if seen?.first == .boolean(true) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await eventually("the sighting counted") { try harness.status()["sightings_today"] as? Int ?? 0 >= 1 }
        #expect(try harness.status()["last_scan_time"] as? Int ?? 0 > 0)

        // Adapter off and on.
        _ = try await control.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "Set",
            [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.boolean(false))])
        try await eventually("bluetooth-off") { try status() == "bluetooth-off" }
        #expect(try harness.status()["advertising"] as? Bool == false)
        // The reason the radio gave, for the owner (`gaenctl status`, `gaenctl get StatusReason`).
        #expect(try harness.ctl(["get", "StatusReason"]).standardOutput == "adapter hci0 is powered off\n")
        _ = try await control.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "Set",
            [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.boolean(true))])
        try await eventually("active again") { try status() == "active" }

        // Disabled: advertising and discovery stop; keys and data stay.
        #expect(try harness.ctl(["disable"]).status == 0)
        try await eventually("disabled") { try status() == "disabled" }
        try await eventually("advertisement withdrawn") { (try? await advertisements()) == 0 }
        try await eventually("discovery stopped") { (try? await discovering()) == 0 }
        #expect(try harness.status()["sightings_today"] as? Int ?? 0 >= 1)

        kill(watch.processIdentifier, SIGTERM)
        watch.waitForExit()
        let watched = try String(contentsOfFile: watchOutput, encoding: .utf8)
        for status in ["active", "bluetooth-off", "disabled"] {
            #expect(watched.contains(#""status":"\#(status)""#), "watch output lacks status \(status)")
        }
        #expect(harness.stop() == .success)
    }
}
