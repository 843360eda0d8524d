// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import ENCore
import Foundation
import GaendAPI

/// Options of every command that talks to gaend.
struct DaemonOptions: ParsableArguments {
    @Option(
        help: "The bus gaend is on: system (default), session, or an address (unix:path=...).",
        completion: .list(["system", "session", "unix:path="]))
    var bus = "system"

    @Flag(help: "Print JSON (stable; docs/gaenctl.md).")
    var json = false

    @Option(help: "Seconds to wait for gaend's answer (default: 25 for a status, 120 for an action, 20 minutes for detect).")
    var timeout: Int?

    /// What the bus is called in messages.
    var busName: String {
        switch bus {
        case "system": "the system bus"
        case "session": "the session bus"
        default: "the bus at \(bus)"
        }
    }

    func connect() async throws -> DaemonClient {
        let connection: DBusConnection
        do {
            switch bus {
            case "system": connection = try await DBusConnection.system()
            case "session": connection = try await DBusConnection.session()
            default:
                guard bus.contains(":") else { throw UsageError("--bus", "'\(bus)' is not system, session or a bus address") }
                connection = try await DBusConnection.bus(address: bus)
            }
        } catch let error as DBusError {
            throw OperationError("cannot connect to \(busName): \(error.message)", exitCode: .daemonUnreachable)
        }
        if let timeout, !(1...86_400).contains(timeout) { throw UsageError("--timeout", "\(timeout) is not 1 to 86400 seconds") }
        return DaemonClient(connection: connection, busName: busName, answerTimeout: timeout.map { .seconds($0) })
    }
}

/// Calls to org.gaend.Manager1, with the daemon's errors turned into gaenctl's exit codes and
/// messages that name the cause.
struct DaemonClient {
    let connection: DBusConnection
    let busName: String
    /// `--timeout`: how long any call waits, in place of each call's own default.
    var answerTimeout: Duration?

    func call(_ method: Manager1.Method, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(120)) async throws -> [DBusValue] {
        do {
            return try await connection.call(
                destination: Manager1.busName, path: Manager1.objectPath, interface: Manager1.interface, member: method.rawValue, arguments,
                timeout: answerTimeout ?? timeout)
        } catch let error as DBusError {
            throw await translate(error)
        }
    }

    func properties() async throws -> [String: DBusValue] {
        do {
            let reply = try await connection.call(
                destination: Manager1.busName, path: Manager1.objectPath, interface: StandardInterfaces.properties, member: "GetAll",
                [.string(Manager1.interface)], timeout: answerTimeout ?? .seconds(25))
            return (reply.first?.stringKeyed ?? [:]).mapValues { $0.variant ?? $0 }
        } catch let error as DBusError {
            throw await translate(error)
        }
    }

    /// Manager1's signals (and PropertiesChanged) from the daemon, from now on.
    func signals() async throws -> AsyncStream<DBusMessage> {
        do {
            return try await connection.signals(matching: DBusMatchRule(sender: Manager1.busName, path: Manager1.objectPath))
        } catch let error as DBusError {
            throw await translate(error)
        }
    }

    /// Who owns org.gaend: now, then each change (`nil`: gaend is not on the bus).
    func owners() async throws -> AsyncStream<String?> {
        do {
            return try await connection.nameOwner(of: Manager1.busName)
        } catch let error as DBusError {
            throw await translate(error)
        }
    }

    func translate(_ error: DBusError) async -> OperationError {
        // No reply is either a gaend that is gone or one still working on something: the owner of
        // its name tells which, so that a busy daemon is not reported as stopped (issue 40).
        if error.name.rawValue == DBusError.Name.noReply.rawValue, await hasOwner() {
            return OperationError(
                "gaend is running on \(busName) but did not answer in time: it is busy; try again (\(error.name))", exitCode: .daemonBusy)
        }
        switch error.name.rawValue {
        case DBusError.Name.serviceUnknown.rawValue, DBusError.Name.nameHasNoOwner.rawValue, DBusError.Name.noReply.rawValue,
            DBusError.Name.disconnected.rawValue:
            return OperationError("gaend is not running on \(busName) (\(error.name))", exitCode: .daemonUnreachable)
        case DBusError.Name.accessDenied.rawValue:
            return OperationError("not authorized: run as root or join the gaend group", exitCode: .notAuthorized)
        case Manager1.ErrorName.notAuthorized.qualified:
            return OperationError("not authorized: \(error.message)", exitCode: .notAuthorized)
        default:
            let name = Manager1.ErrorName(qualified: error.name.rawValue)?.rawValue ?? error.name.rawValue
            return OperationError("\(name): \(error.message)")
        }
    }
}

extension DaemonClient {
    /// Whether anyone owns gaend's name now.
    func hasOwner() async -> Bool {
        guard let owners = try? await connection.nameOwner(of: Manager1.busName) else { return false }
        for await owner in owners { return owner != nil }
        return false
    }
}

/// Output helpers shared by the daemon commands.
enum Output {
    static func json(_ object: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A D-Bus value as plain JSON-able Swift (for --json).
    static func plain(_ value: DBusValue) -> Any {
        switch value {
        case .byte(let v): Int(v)
        case .boolean(let v): v
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): v
        case .uint64(let v): v
        case .double(let v): v
        case .string(let v), .objectPath(let v), .signature(let v): v
        case .unixFD(let v): Int(v.rawValue)
        case .array(.byte, _): value.bytes.map { $0.map { String(format: "%02x", $0) }.joined() } ?? ""
        case .array(_, let values): values.map(plain)
        case .dictionary(_, _, let entries):
            Dictionary(entries.map { ("\(plain($0.key))", plain($0.value)) }, uniquingKeysWith: { first, _ in first })
        case .structure(let fields): fields.map(plain)
        case .variant(let inner): plain(inner)
        }
    }

    /// A time as the daemon writes it everywhere (ISO 8601, UTC: `2026-11-21T10:00:00Z`).
    static func time(_ seconds: UInt64) -> String {
        guard seconds > 0 else { return "never" }
        return UnixTime(exactlySeconds: seconds).map(ISO8601.format) ?? "\(seconds) s"
    }

    /// A JSON number without a needless fraction: 240, 12.5.
    static func number(_ value: Any?) -> String {
        guard let number = value as? Double ?? (value as? Int).map(Double.init) else { return "?" }
        return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
