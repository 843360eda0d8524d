// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Foundation
import GaendTestSupport
import Glibc
import Synchronization
import Testing

/// Two connections of this library on a private `dbus-daemon` started by each test, and the
/// system's own clients (busctl, gdbus) as independent peers.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct DBusBusTests {
    static let echoInterface = "org.gaend.Test1"

    /// Every value type, and a nesting of each container.
    static var samples: [DBusValue] {
        [
            .byte(0xFE), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535), .int32(-7), .uint32(4_000_000_000),
            .int64(Int64.min), .uint64(UInt64.max), .double(-0.5), .string("grüße ✓"), .string(""), .objectPath("/org/gaend/x_1"),
            .signature("a{oa{sa{sv}}}"), .bytes([]), .bytes(Array(0...255)), .strings(["a", "b"]),
            .properties(["Type": .string("broadcast"), "ServiceData": .properties(["FD6F": .bytes([1, 2, 3])]), "Min": .uint32(200)]),
            .dictionary(
                key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                [
                    .init(
                        .objectPath("/a"),
                        .dictionary(
                            key: .string, value: .dictionary(key: .string, value: .variant), [.init(.string("org.x.Y1"), .properties(["P": .int16(-3)]))]))
                ]),
            .dictionary(key: .uint64, value: .double, []),
            .structure([.byte(1), .string("two"), .array(element: .structure([.int32, .boolean]), [.structure([.int32(3), .boolean(true)])])]),
            .variant(.variant(.int32(9))),
            .array(element: .array(.byte), [.bytes([1]), .bytes([])]),
        ]
    }

    static func echoObject() -> [DBusInterface] {
        [
            DBusInterface(
                name: echoInterface,
                methods: [
                    DBusMethod("Echo", inputs: [.init("value", .variant)], outputs: [.init("value", .variant)]) { call in call.arguments },
                    DBusMethod("Upper", inputs: [.init("text", .string)], outputs: [.init("text", .string)]) { call in
                        [.string(call.arguments[0].string!.uppercased())]
                    },
                    DBusMethod("Fail") { _ in throw DBusError("org.gaend.Error.Test", "failed on purpose") },
                    DBusMethod("Hang") { _ in
                        try await Task.sleep(for: .seconds(3600))
                        return []
                    },
                ],
                properties: [DBusProperty("Constant", .uint32) { .uint32(42) }],
                signals: [DBusSignal("Happened", [.init("what", .string)])])
        ]
    }

    @Test func everyTypeRoundTripsThroughTheBus() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: Self.echoObject())
        for sample in Self.samples {
            let reply = try await client.call(
                destination: server.uniqueName, path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Echo", [.variant(sample)])
            #expect(reply == [.variant(sample)], "\(sample.type)")
        }
        // A descriptor arrives as a duplicate of the one sent: a pipe written through it is read here.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let sent = DBusFileDescriptor(owning: ends[1])
        let reply = try await client.call(
            destination: server.uniqueName, path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Echo", [.variant(.unixFD(sent))])
        guard case .variant(.unixFD(let received)) = reply.first else {
            Issue.record("no descriptor came back: \(reply)")
            return
        }
        #expect(received.rawValue != sent.rawValue)
        #expect(write(received.rawValue, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 1 && byte == UInt8(ascii: "x"))
        close(ends[0])
    }

    @Test func callsCheckSignaturesAndNameErrors() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: Self.echoObject())
        func error(_ member: String, _ arguments: [DBusValue], path: String = "/org/gaend/Echo", interface: String? = DBusBusTests.echoInterface) async
            -> DBusError?
        {
            do {
                _ = try await client.call(destination: server.uniqueName, path: path, interface: interface, member: member, arguments)
                return nil
            } catch {
                return error as? DBusError
            }
        }
        #expect(await error("Upper", [.int32(1)])?.name == .invalidArgs)
        #expect(await error("Upper", [.int32(1)])?.message.contains("'s'") == true)
        #expect(await error("Nope", [])?.name == .unknownMethod)
        #expect(await error("Echo", [.variant(.byte(1))], interface: "org.gaend.Other1")?.name == .unknownInterface)
        #expect(await error("Echo", [.variant(.byte(1))], path: "/org/gaend/Nothing")?.name == .unknownObject)
        #expect(await error("Fail", []) == DBusError("org.gaend.Error.Test", "failed on purpose"))
        #expect(
            await error("Set", [.string(Self.echoInterface), .string("Constant"), .variant(.uint32(1))], interface: "org.freedesktop.DBus.Properties")?.name
                == .propertyReadOnly)
        #expect(await error("Get", [.string(Self.echoInterface), .string("Missing")], interface: "org.freedesktop.DBus.Properties")?.name == .unknownProperty)
        // Without an interface the member alone finds the method.
        #expect(
            try await client.call(destination: server.uniqueName, path: "/org/gaend/Echo", interface: nil, member: "Upper", [.string("a")]) == [.string("A")])
        // Bad names are refused here, before libdbus (which would abort the process).
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: server.uniqueName, path: "bad path", interface: nil, member: "Upper", [])
        }
    }

    @Test func anOutgoingCallKeepsServingCallsBack() async throws {
        // bluetoothd's pattern: asked to RegisterAdvertisement, it calls GetAll on the caller's
        // object before it replies. A caller that blocked would never answer.
        let bus = try DBusDaemonFixture()
        let registrar = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        let servingClient = taskOnOwnThreads { await client.serve() }
        defer { servingClient.cancel() }
        try await client.export(
            "/org/gaend/Advertisement",
            interfaces: [DBusInterface(name: "org.bluez.LEAdvertisement1", properties: [DBusProperty("Type", .string) { .string("broadcast") }])])
        let servingRegistrar = taskOnOwnThreads { await registrar.serve() }
        defer { servingRegistrar.cancel() }
        try await registrar.export(
            "/",
            interfaces: [
                DBusInterface(
                    name: "org.gaend.Registrar1",
                    methods: [
                        DBusMethod("Register", inputs: [.init("object", .objectPath)], outputs: [.init("type", .string)]) { call in
                            let properties = try await registrar.call(
                                destination: call.sender, path: call.arguments[0].objectPath!, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                [.string("org.bluez.LEAdvertisement1")])
                            return [properties[0].stringKeyed?["Type"]?.variant ?? .string("none")]
                        }
                    ])
            ])
        let reply = try await client.call(
            destination: registrar.uniqueName, path: "/", interface: "org.gaend.Registrar1", member: "Register", [.objectPath("/org/gaend/Advertisement")])
        #expect(reply == [.string("broadcast")])
    }

    @Test func aPeerThatLeavesMidCallGivesNoReply() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: Self.echoObject())
        let serverName = server.uniqueName
        async let outcome: DBusError? = {
            do {
                _ = try await client.call(destination: serverName, path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Hang")
                return nil
            } catch {
                return error as? DBusError
            }
        }()
        // The call is in the server's hands once its handler runs; then the server goes.
        let hanging = try await client.signals(matching: DBusMatchRule(interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: serverName))
        try await Task.sleep(for: .milliseconds(100))
        server.close()
        for await _ in hanging { break }
        let error = await outcome
        #expect(error?.name == .noReply)
    }

    @Test func aCallTimesOutWithNoReply() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: Self.echoObject())
        await #expect {
            _ = try await client.call(
                .call(destination: server.uniqueName, path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Hang"), timeout: .milliseconds(200))
        } throws: { ($0 as? DBusError)?.name == .noReply }
    }

    @Test func signalsMatchTheirRuleAndAWellKnownSenderMeansItsOwner() async throws {
        let bus = try DBusDaemonFixture()
        let owner = try await DBusConnection.bus(address: bus.address)
        let impostor = try await DBusConnection.bus(address: bus.address)
        let listener = try await DBusConnection.bus(address: bus.address)
        #expect(try await owner.requestName("org.gaend.Emitter") == .primaryOwner)
        #expect(try await impostor.requestName("org.gaend.Emitter") == .exists)
        let stream = try await listener.signals(matching: DBusMatchRule(sender: "org.gaend.Emitter", interface: Self.echoInterface, member: "Happened"))
        // The impostor's signal reaches the listener through a broader rule, and is still not the owner's.
        let broad = try await listener.signals(matching: DBusMatchRule(interface: Self.echoInterface))
        try impostor.emit(path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Happened", [.string("impostor")])
        try owner.emit(path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Happened", [.string("owner")])
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.body == [.string("owner")])
        // Both arrive there, in either order (two senders have no order between them).
        var broadIterator = broad.makeAsyncIterator()
        let first = await broadIterator.next()?.body.first?.string
        let second = await broadIterator.next()?.body.first?.string
        #expect(Set([first, second]) == ["impostor", "owner"])
    }

    /// A consumer cancelled while signals arrive. The connection used to hand a signal over under
    /// its lock, and a cancelled stream's onTermination takes that lock while the runtime holds
    /// the consumer's: each thread waited for the other, and the connection stopped for good
    /// (gaenctl detect hung that way). Each round cancels during a burst of signals; without the
    /// fix rounds 5, 23 and 32 deadlocked in three runs. The bursts are bounded, so a slow
    /// machine does more slowly the same work; the cancelling runs on a thread of its own, so that
    /// a deadlock is reported, not hung in.
    @Test func cancellingAConsumerWhileSignalsArriveDeadlocksNothing() async throws {
        let bus = try DBusDaemonFixture()
        let emitter = try await DBusConnection.bus(address: bus.address)
        let listener = try await DBusConnection.bus(address: bus.address)
        for round in 0..<100 {
            let stream = try await listener.signals(matching: DBusMatchRule(sender: emitter.uniqueName, interface: Self.echoInterface))
            let consumer = Task.detached {
                for await _ in stream {}
            }
            for index in 0..<40 {
                try emitter.emit(path: "/org/gaend/Echo", interface: Self.echoInterface, member: "Happened", [.string("\(round).\(index)")])
            }
            // Cancelled while the burst arrives: at once, or after its first signals.
            usleep(UInt32.random(in: 0...200))
            let cancelled = Atomic<Bool>(false)
            Thread {
                consumer.cancel()
                cancelled.store(true, ordering: .releasing)
            }.start()
            // A hang detector, not a speed limit: the cancel takes microseconds.
            for _ in 0..<3000 where !cancelled.load(ordering: .acquiring) { usleep(10_000) }
            guard cancelled.load(ordering: .acquiring) else {
                Issue.record("cancelling the consumer in round \(round) did not return in 30 s: a deadlock")
                return
            }
            await consumer.value
        }
        // The connection still answers.
        #expect(try await listener.owner(of: "org.freedesktop.DBus") == "org.freedesktop.DBus")
    }

    @Test func nameOwnersAreTracked() async throws {
        let bus = try DBusDaemonFixture()
        let watcher = try await DBusConnection.bus(address: bus.address)
        let owners = try await watcher.nameOwner(of: "org.gaend.Tracked")
        var iterator = owners.makeAsyncIterator()
        #expect(await iterator.next() == .some(nil))
        let owner = try await DBusConnection.bus(address: bus.address)
        #expect(try await owner.requestName("org.gaend.Tracked") == .primaryOwner)
        #expect(await iterator.next() == .some(owner.uniqueName))
        owner.close()
        #expect(await iterator.next() == .some(nil))
    }

    @Test func anObjectManagerAnnouncesAndListsItsObjects() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        try server.addObjectManager(at: "/org/gaend")
        let added = try await client.signals(matching: DBusMatchRule(sender: server.uniqueName, interface: "org.freedesktop.DBus.ObjectManager"))
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: Self.echoObject())
        var iterator = added.makeAsyncIterator()
        let signal = await iterator.next()
        #expect(signal?.member == "InterfacesAdded")
        #expect(signal?.body.first == .objectPath("/org/gaend/Echo"))
        #expect(signal?.body.last?.stringKeyed?[Self.echoInterface]?.stringKeyed?["Constant"] == .variant(.uint32(42)))
        let managed = try await client.call(
            destination: server.uniqueName, path: "/org/gaend", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        #expect(managed.first?.pathKeyed?.keys.sorted() == ["/org/gaend/Echo"])
        try server.unexport("/org/gaend/Echo")
        let removed = await iterator.next()
        #expect(removed?.member == "InterfacesRemoved")
        #expect(removed?.body.last == .strings([Self.echoInterface]))
    }

    @Test func propertiesCanBeSetAndAnnounceTheirChange() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        let client = try await DBusConnection.bus(address: bus.address)
        let stored = Mutex<String>("first")
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export(
            "/org/gaend/Settable",
            interfaces: [
                DBusInterface(
                    name: Self.echoInterface,
                    properties: [
                        DBusProperty("Name", .string, get: { .string(stored.withLock { $0 }) }, set: { value in stored.withLock { $0 = value.string! } })
                    ])
            ])
        let changes = try await client.signals(
            matching: DBusMatchRule(sender: server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await client.call(
            destination: server.uniqueName, path: "/org/gaend/Settable", interface: "org.freedesktop.DBus.Properties", member: "Set",
            [.string(Self.echoInterface), .string("Name"), .variant(.string("second"))])
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        #expect(change?.body.first == .string(Self.echoInterface))
        #expect(change?.body[1].stringKeyed?["Name"] == .variant(.string("second")))
        await #expect {
            _ = try await client.call(
                destination: server.uniqueName, path: "/org/gaend/Settable", interface: "org.freedesktop.DBus.Properties", member: "Set",
                [.string(Self.echoInterface), .string("Name"), .variant(.int32(3))])
        } throws: { ($0 as? DBusError)?.name == .invalidArgs }
    }

    @Test func theBusGoingAwayEndsTheConnection() async throws {
        let bus = try DBusDaemonFixture()
        let client = try await DBusConnection.bus(address: bus.address)
        let stream = try await client.signals(matching: DBusMatchRule(interface: Self.echoInterface))
        bus.stop()
        await client.disconnected()
        #expect(!client.isConnected)
        for await _ in stream {}  // finished, not hanging
        await #expect {
            _ = try await client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames")
        } throws: { ($0 as? DBusError)?.name == .disconnected }
    }
}
