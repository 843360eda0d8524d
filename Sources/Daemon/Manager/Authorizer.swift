// SPDX-License-Identifier: GPL-3.0-or-later

import DBus

/// Key release and reset ask polkit (org.freedesktop.PolicyKit1.Authority.CheckAuthorization on the
/// caller's bus name, interaction allowed); without polkit on the bus only root may. The bus
/// policy has already limited method calls to root and the gaend group.
struct Authorizer: Sendable {
    enum Action: String, Sendable {
        case releaseKeys = "org.gaend.release-keys"
        case reset = "org.gaend.reset"
    }

    static let polkit = "org.freedesktop.PolicyKit1"
    let bus: DBusConnection

    func check(_ sender: String, _ action: Action) async throws(ManagerError) {
        let polkitRunning: Bool
        do {
            polkitRunning = try await bus.owner(of: Self.polkit) != nil
        } catch {
            throw .internal("asking the bus for polkit: \(error)")
        }
        if polkitRunning {
            let subject = DBusValue.structure([.string("system-bus-name"), .properties(["name": .string(sender)])])
            let reply: [DBusValue]
            do {
                // Interactive: an agent may ask for a password, so the timeout is long.
                reply = try await bus.call(
                    destination: Self.polkit, path: "/org/freedesktop/PolicyKit1/Authority", interface: "org.freedesktop.PolicyKit1.Authority",
                    member: "CheckAuthorization",
                    [subject, .string(action.rawValue), .dictionary(key: .string, value: .string, []), .uint32(1), .string("")],
                    timeout: .seconds(120))
            } catch {
                throw .notAuthorized("polkit could not decide on \(action.rawValue): \(error)")
            }
            guard reply.first?.structureFields?.first == .boolean(true) else {
                throw .notAuthorized("not authorized: polkit refused \(action.rawValue)")
            }
            return
        }
        let uid: UInt32?
        do {
            uid = try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetConnectionUnixUser",
                [.string(sender)]
            ).first?.uint32
        } catch {
            throw .internal("asking the bus who called: \(error)")
        }
        guard uid == 0 else { throw .notAuthorized("not authorized: \(action.rawValue) needs root when polkit is not running") }
    }
}
