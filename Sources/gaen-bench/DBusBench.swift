// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import Foundation
import Glibc

/// D-Bus figures on a private dbus-daemon: method round trips one at a time and many in flight,
/// and signals delivered to a subscriber.
struct DBusBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dbus", abstract: "D-Bus: call round trips (sequential and concurrent) and signals through a private dbus-daemon.")

    @Option(help: "Calls per measurement.")
    var calls = 20_000

    @Option(help: "Signals emitted.")
    var signals = 50_000

    func run() async throws {
        let bus = try PrivateBus()
        defer { withExtendedLifetime(bus) {} }
        let address = bus.address
        let server = try await DBusConnection.bus(address: address)
        let client = try await DBusConnection.bus(address: address)
        try await server.export(
            "/org/gaend/Bench",
            interfaces: [
                DBusInterface(
                    name: "org.gaend.Bench1",
                    methods: [
                        DBusMethod("Echo", inputs: [.init("data", .array(.byte))], outputs: [.init("data", .array(.byte))]) { $0.arguments }
                    ])
            ])
        async let serving: Void = server.serve()
        defer { server.close() }
        let payload = DBusValue.bytes(Array(repeating: 0xA5, count: 20))
        let call = DBusMessage.call(destination: server.uniqueName, path: "/org/gaend/Bench", interface: "org.gaend.Bench1", member: "Echo", [payload])
        let clock = ContinuousClock()

        let sequential = try await clock.measure {
            for _ in 0..<calls { _ = try await client.call(call) }
        }
        let sequentialSeconds = Figures.seconds(sequential)
        print(
            "sequential calls: \(Figures.grouped(Double(calls) / sequentialSeconds))/s, \(Figures.decimals(sequentialSeconds / Double(calls) * 1e6, 1)) µs per round trip"
        )

        let inFlight = 64
        let concurrent = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<inFlight {
                    group.addTask { for _ in 0..<(calls / inFlight) { _ = try await client.call(call) } }
                }
                try await group.waitForAll()
            }
        }
        print("concurrent calls (\(inFlight) in flight): \(Figures.grouped(Double(calls / inFlight * inFlight) / Figures.seconds(concurrent)))/s")

        let stream = try await client.signals(matching: DBusMatchRule(sender: server.uniqueName, interface: "org.gaend.Bench1"))
        let count = signals
        let delivered = try await clock.measure {
            async let received: Int = {
                var seen = 0
                for await _ in stream {
                    seen += 1
                    if seen == count { break }
                }
                return seen
            }()
            for _ in 0..<count { try server.emit(path: "/org/gaend/Bench", interface: "org.gaend.Bench1", member: "Tick", [payload]) }
            _ = await received
        }
        print("signals: \(Figures.grouped(Double(count) / Figures.seconds(delivered)))/s emitted and delivered")
    }
}
