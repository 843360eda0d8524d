// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ContactLog
import DBus
import Daemon
import Detection
import ENCore
import GaendAPI
import GaendConfiguration
import GaendTestSupport
import KeyFiles
import KeySchedule
import Logging
import ServiceLifecycleTestKit
import Storage
import Synchronization
import Testing

/// Manager1 answers Get and GetAll from the snapshot it last published (issue 48): no file of the
/// data directory is opened to answer them, whatever detection keeps there, and a change is
/// announced with only the properties that differ.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct HeldPropertiesTests {
    @Test func getAndGetAllOpenNoFileAndAReloadAnnouncesOnlyWhatItChanged() async throws {
        let bus = try DBusDaemonFixture()
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = ManualClock(UnixTime.vectorDay.adding(seconds: 10 * 3600))
        // Detection's files as a daemon that ran leaves them: two runs counted, a state.
        try AtomicFile.write(Array("\(wall.now().seconds - 7200)\n\(wall.now().seconds - 3600)\n".utf8), to: data.path(of: "detection-budget"))
        try AtomicFile.write(
            Array(#"{"last_detection": \#(wall.now().seconds - 3600), "last_error": null, "next_detection": null}"#.utf8),
            to: data.path(of: "detection-state.json"))
        let keys = try KeySchedule(dataDirectory: data, clock: wall, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let worker = DetectionWorker(
            dataDirectory: data, downloader: nil, policy: SignaturePolicy(trustedKeys: []), defaultConfiguration: .builtIn, clock: wall, logger: quiet)
        let gate = EnablementGate(enabled: false)
        let status = RadioStatusBoard(logger: quiet)
        var settings = Manager.Settings()
        settings.region = "CH"
        let manager = try Manager(
            dataDirectory: data, keys: keys, log: log, worker: worker, radioStatus: status, gate: gate, settings: settings, clock: wall, logger: quiet)
        let ticks = TestClock()
        let service = ManagerService(
            manager: manager, bus: .address(bus.address), radioStatus: status, gate: gate, signals: DetectionSignals(),
            notifier: SystemdNotifier(environment: [:]), logger: quiet, ticks: ticks)
        let client = try await DBusConnection.bus(address: bus.address)
        let changes = try await client.signals(
            matching: DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: Manager1.objectPath))
        let announced = Mutex<[[String: DBusValue]]>([])
        let listener = Task {
            for await message in changes {
                if let changed = message.body.dropFirst().first?.stringKeyed { announced.withLock { $0.append(changed.mapValues { $0.variant ?? $0 }) } }
            }
        }
        defer { listener.cancel() }

        func getAll() async throws -> [String: DBusValue] {
            let reply = try await client.call(
                destination: Manager1.busName, path: Manager1.objectPath, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                [.string(Manager1.interface)])
            return (reply.first?.stringKeyed ?? [:]).mapValues { $0.variant ?? $0 }
        }

        try await testGracefulShutdown { shutdown in
            let running = Task { try await service.run() }
            try await eventually("the service waiting for a change by time alone", within: .seconds(150)) { ticks.waiting == 1 }
            let first = try await getAll()
            #expect(first[Manager1.Property.detectionsRemaining.rawValue] == .uint32(4))
            #expect(first[Manager1.Property.lastDetectionTime.rawValue] == .uint64(UInt64(wall.now().seconds - 3600)))
            #expect(first[Manager1.Property.region.rawValue] == .string("CH"))

            // Ten GetAll and a Get of every property: not one file of the data directory opened.
            let watch = try FileOpenWatch(directory: directory.path)
            for _ in 0..<10 { #expect(try await getAll() == first) }
            for property in Manager1.Property.allCases where !property.isPrivate {
                let reply = try await client.call(
                    destination: Manager1.busName, path: Manager1.objectPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                    [.string(Manager1.interface), .string(property.rawValue)])
                #expect(reply.first?.variant == first[property.rawValue])
            }
            #expect(watch.opened() == [])

            // A reload that changes the region: one announcement, of the region alone.
            let before = announced.withLock { $0.count }
            settings.region = "DE"
            await manager.reload(settings)
            try await eventually("the region announced") { announced.withLock { $0.count } > before }
            #expect(announced.withLock { Array($0[before...]) } == [[Manager1.Property.region.rawValue: .string("DE")]])
            #expect(try await getAll()[Manager1.Property.region.rawValue] == .string("DE"))

            shutdown.triggerGracefulShutdown()
            try await running.value
        }
    }
}
