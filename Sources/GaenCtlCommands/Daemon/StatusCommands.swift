// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import ENCore
import Foundation
import GaendAPI
import Storage

/// `gaenctl status`: the daemon's properties, in the manner of `bluetoothctl show`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show gaend's state.")

    @OptionGroup var options: DaemonOptions

    /// The answer to "was I exposed?" first, then the rest as bluetoothctl orders it.
    static let order: [Manager1.Property] = [
        .exposureDays, .lastExposureTime, .status, .statusReason, .authorizationStatus, .enabled, .radioBackend, .advertising, .lastScanTime, .sightingsToday,
        .lastDetectionTime, .lastDetectionError, .detectionsRemaining, .nextDetectionTime, .region, .version,
    ]

    func run() async throws {
        let client = try await options.connect()
        let properties = try await client.properties()
        if options.json {
            print(Output.json(properties.mapValues(Output.plain)))
            return
        }
        print("gaend on \(client.busName) (\(Manager1.busName) \(Manager1.objectPath))")
        for property in Self.order {
            guard let value = properties[property.rawValue] else { continue }
            print("\t\(property.rawValue): \(Self.text(value, of: property))")
        }
    }

    /// A property's value as a person reads it.
    static func text(_ value: DBusValue, of property: Manager1.Property) -> String {
        switch value {
        case .boolean(let flag): flag ? "yes" : "no"
        case .array(_, let days) where property == .exposureDays:
            days.isEmpty ? "none in the last 14 days" : days.map { "\(Output.plain($0))" }.joined(separator: ", ")
        case .uint64(let seconds) where property.signature == "t": Output.time(seconds)
        case .string(let string) where string.isEmpty: "(none)"
        default: "\(Output.plain(value))"
        }
    }
}

/// `gaenctl get PROPERTY`: one property's value alone, for scripts (as `systemctl show -p X --value`).
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print one of gaend's properties, the value alone.",
        discussion: "Properties: \(Manager1.Property.allCases.map(\.rawValue).joined(separator: ", ")). Names are case-insensitive.")

    @Argument(help: "The property, e.g. Status or ExposureDays.")
    var property: String

    @OptionGroup var options: DaemonOptions

    func validate() throws {
        guard Self.property(named: property) != nil else {
            throw ValidationError("no property '\(property)'; gaend has \(Manager1.Property.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    static func property(named name: String) -> Manager1.Property? {
        Manager1.Property.allCases.first { $0.rawValue.lowercased() == name.lowercased() }
    }

    func run() async throws {
        guard let property = Self.property(named: property) else { return }
        let client = try await options.connect()
        guard let value = try await client.properties()[property.rawValue] else {
            throw OperationError("gaend did not report \(property.rawValue)")
        }
        print(options.json ? Output.json([property.rawValue: Output.plain(value)]) : StatusCommand.text(value, of: property))
    }
}

/// `gaenctl enable` and `gaenctl disable`.
struct EnableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable", abstract: "Turn Exposure Notification on (the first time records your consent).")

    @OptionGroup var options: DaemonOptions

    func run() async throws { try await SetEnabled.run(true, options) }
}

struct DisableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable", abstract: "Turn Exposure Notification off (keys and data are kept).")

    @OptionGroup var options: DaemonOptions

    func run() async throws { try await SetEnabled.run(false, options) }
}

enum SetEnabled {
    static func run(_ enabled: Bool, _ options: DaemonOptions) async throws {
        let client = try await options.connect()
        _ = try await client.call(.setEnabled, [.boolean(enabled)])
        print(options.json ? Output.json(["enabled": enabled]) : "Exposure Notification \(enabled ? "enabled" : "disabled")")
    }
}

/// `gaenctl watch`: the daemon's signals as they come, each line stamped with the time it came,
/// times in UTC, and a line when gaend leaves the bus or comes back.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print gaend's signals (property changes, detection progress and results) as they come, and when it leaves or returns.")

    @OptionGroup var options: DaemonOptions

    @Option(help: "Stop after this many signals (default: never).")
    var count: Int?

    enum Event {
        case signal(DBusMessage)
        case owner(String?)
        case ended
    }

    func run() async throws {
        let client = try await options.connect()
        let signals = try await client.signals()
        let owners = try await client.owners()
        let (events, sink) = AsyncStream<Event>.makeStream()
        let forward = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await signal in signals { sink.yield(.signal(signal)) } }
                group.addTask { for await owner in owners { sink.yield(.owner(owner)) } }
                await group.waitForAll()
            }
            sink.yield(.ended)
        }
        defer { forward.cancel() }
        // Ready: a script may act now and rely on seeing the result.
        GaenCtl.writeLineNow(options.json ? Output.json(["watching": true]) : "watching gaend on \(client.busName)")
        var seen = 0
        var present: Bool?
        for await event in events {
            let now = ISO8601.format(SystemWallClock().now())
            switch event {
            case .owner(let owner):
                let here = owner != nil
                defer { present = here }
                // The first answer is the state when watching began, said only if gaend is absent.
                guard present != nil || !here, present != here else { continue }
                if options.json {
                    GaenCtl.writeLineNow(Output.json(["time": now, "bus": here ? "returned" : "left"]))
                } else {
                    GaenCtl.writeLineNow("\(now) [BUS] gaend \(here ? "is back on" : present == nil ? "is not on" : "left") \(client.busName)")
                }
            case .signal(let signal):
                print(signal, at: now)
                seen += 1
                if let count, seen >= count { return }
            case .ended:
                throw OperationError("the connection to \(client.busName) ended", exitCode: .daemonUnreachable)
            }
        }
    }

    private func print(_ signal: DBusMessage, at now: String) {
        let member = signal.member ?? ""
        if options.json {
            GaenCtl.writeLineNow(Output.json(["time": now, "signal": member, "arguments": signal.body.map(Output.plain)]))
        } else if member == "PropertiesChanged", signal.body.count >= 2, let changed = signal.body[1].stringKeyed {
            for (name, value) in changed.sorted(by: { $0.key < $1.key }) {
                let text = Manager1.Property(rawValue: name).map { StatusCommand.text(value.variant ?? value, of: $0) } ?? "\(Output.plain(value))"
                GaenCtl.writeLineNow("\(now) [CHG] \(name): \(text)")
            }
        } else {
            GaenCtl.writeLineNow("\(now) [SIG] \(member) \(signal.body.map { "\(Output.plain($0))" }.joined(separator: " "))")
        }
    }
}
