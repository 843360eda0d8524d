// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import ENCore
import Foundation
import GaendAPI
import Storage
import SystemCalls

/// `gaenctl status`: the daemon's properties, in the manner of `bluetoothctl show`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show gaend's state.")

    @OptionGroup var options: DaemonOptions

    /// The answer to "was I exposed?" first, then the beacon (what it is doing, why not, what is on
    /// the air and until when), then detection and the key server, as bluetoothctl orders it.
    static let order: [Manager1.Property] = [
        .exposureDays, .lastExposureTime, .exposureClassification, .status, .statusReason, .clockTrusted, .authorizationStatus, .enabled, .radioBackend,
        .advertising,
        .advertisingSince,
        .address, .rpiInterval, .nextRotation, .lastScanTime, .sightingsToday, .heldSightings, .keyServer, .lastDownloadTime, .lastDetectionTime,
        .lastDetectionError,
        .detectionsRemaining, .nextDetectionTime, .region, .version,
    ]

    func run() async throws {
        let client = try await options.connect()
        let properties = try await client.properties()
        if options.json {
            print(Output.json(JSONShape.properties(properties)))
            return
        }
        print("gaend on \(client.busName) (\(Manager1.busName) \(Manager1.objectPath))")
        if properties[Manager1.Property.exposureDays.rawValue] == nil {
            // gaend shows the exposure answer only to root, its own user and the owner's group.
            print("\tExposureDays: not shown to this user (root and the gaend group only)")
        }
        for property in Self.order {
            guard let value = properties[property.rawValue] else { continue }
            // Advertising details mean nothing while it is off: one line says so.
            if Self.advertisingDetails.contains(property), properties[Manager1.Property.advertising.rawValue] != .boolean(true) { continue }
            print("\t\(property.rawValue): \(Self.text(value, of: property, in: properties))")
        }
    }

    static let advertisingDetails: Set<Manager1.Property> = [.advertisingSince, .address, .rpiInterval, .nextRotation]

    /// A property's value as a person reads it; `others` are the rest of the properties, for the
    /// values that depend on them.
    static func text(_ value: DBusValue, of property: Manager1.Property, in others: [String: DBusValue] = [:]) -> String {
        switch value {
        case .boolean(let flag) where property == .clockTrusted:
            // One line for the clock: trusted or not, and how far from the key server's Date.
            if case .int64(let offset) = others[Manager1.Property.clockOffset.rawValue], offset != 0 {
                "\(flag ? "yes" : "no") (\(SpokenDuration.of(milliseconds: abs(offset))) \(offset > 0 ? "behind" : "ahead of") the key server)"
            } else {
                flag ? "yes" : "no"
            }
        case .boolean(let flag): flag ? "yes" : "no"
        case .array(_, let days) where property == .exposureDays:
            days.isEmpty ? "none in the last 14 days" : days.map { "\(Output.plain($0))" }.joined(separator: ", ")
        case .uint64(let seconds) where property.signature == "t": Output.time(seconds)
        case .uint32(let index) where property == .exposureClassification:
            // ENX's index and the authority's name for it; 0 is ENX's "no exposure".
            if index == 0 {
                "(none)"
            } else if case .string(let name) = others[Manager1.Property.exposureClassificationName.rawValue], !name.isEmpty {
                "\(index) (\(name))"
            } else {
                "\(index)"
            }
        case .uint32(let interval) where property == .rpiInterval:
            // The interval number and the 10 minutes it names; the RPI itself is never shown.
            interval == 0 ? "(none)" : "\(interval) (\(Output.time(UInt64(interval) * 600)) to \(Output.time(UInt64(interval + 1) * 600)))"
        case .string(let string) where string.isEmpty && property == .address:
            if case .string(let radio) = others[Manager1.Property.radioBackend.rawValue], radio.hasPrefix("bluez") {
                "(chosen by bluetoothd)"
            } else {
                "(none)"
            }
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

    @Argument(help: "The property, e.g. Status or ExposureDays.", completion: .list(Manager1.Property.allCases.map(\.rawValue)))
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
            if property.isPrivate {
                throw OperationError(
                    "not authorized: gaend shows \(property.rawValue) only to root, its own user and the owner's group", exitCode: .notAuthorized)
            }
            throw OperationError("gaend did not report \(property.rawValue)")
        }
        print(options.json ? Output.json(JSONShape.properties([property.rawValue: value])) : StatusCommand.text(value, of: property))
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
            let time = SystemWallClock().now()
            let now = ISO8601.format(time)
            switch event {
            case .owner(let owner):
                let here = owner != nil
                defer { present = here }
                // The first answer is the state when watching began, said only if gaend is absent.
                guard present != nil || !here, present != here else { continue }
                if options.json {
                    GaenCtl.writeLineNow(Output.json(["time": time.seconds, "bus": here ? "returned" : "left"]))
                } else {
                    GaenCtl.writeLineNow("\(now) [BUS] gaend \(here ? "is back on" : present == nil ? "is not on" : "left") \(client.busName)")
                }
            case .signal(let signal):
                print(signal, at: time)
                seen += 1
                if let count, seen >= count { return }
            case .ended:
                throw OperationError("the connection to \(client.busName) ended", exitCode: .daemonUnreachable)
            }
        }
    }

    private func print(_ signal: DBusMessage, at time: UnixTime) {
        let member = signal.member ?? ""
        let now = ISO8601.format(time)
        let changed = member == "PropertiesChanged" && signal.body.count >= 2 ? signal.body[1].stringKeyed?.mapValues { $0.variant ?? $0 } : nil
        if options.json {
            // A property change has the properties' own shape (`status --json`); other signals
            // their arguments in order.
            if let changed {
                GaenCtl.writeLineNow(Output.json(["time": time.seconds, "signal": member, "changed": JSONShape.properties(changed)]))
            } else {
                GaenCtl.writeLineNow(Output.json(["time": time.seconds, "signal": member, "arguments": signal.body.map(Output.plain)]))
            }
        } else if let changed {
            for (name, value) in changed.sorted(by: { $0.key < $1.key }) {
                let text = Manager1.Property(rawValue: name).map { StatusCommand.text(value, of: $0) } ?? "\(Output.plain(value))"
                GaenCtl.writeLineNow("\(now) [CHG] \(name): \(text)")
            }
        } else {
            GaenCtl.writeLineNow("\(now) [SIG] \(member) \(signal.body.map { "\(Output.plain($0))" }.joined(separator: " "))")
        }
    }
}
