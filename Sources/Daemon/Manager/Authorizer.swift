// SPDX-License-Identifier: GPL-3.0-or-later

import DBus

/// Key release and reset ask polkit (org.freedesktop.PolicyKit1.Authority.CheckAuthorization on the
/// caller's bus name, interaction allowed), starting it when it is activatable; without polkit on
/// the bus only root may. The bus policy has already limited method calls to root and the gaend
/// group.
struct Authorizer: Sendable {
    enum Action: String, Sendable {
        case releaseKeys = "org.gaend.release-keys"
        case reset = "org.gaend.reset"
    }

    static let polkit = "org.freedesktop.PolicyKit1"
    let bus: DBusConnection

    func check(_ sender: String, _ action: Action) async throws(ManagerError) {
        // polkit is asked by name, which starts it when it is activatable and not running yet
        // (systemd starts polkitd on demand); only a bus that has no polkit at all, running or
        // activatable, leaves the decision to the caller's uid.
        let subject = DBusValue.structure([.string("system-bus-name"), .properties(["name": .string(sender)])])
        let reply: [DBusValue]
        do {
            // Interactive: an agent may ask for a password, so the timeout is long.
            reply = try await bus.call(
                destination: Self.polkit, path: "/org/freedesktop/PolicyKit1/Authority", interface: "org.freedesktop.PolicyKit1.Authority",
                member: "CheckAuthorization",
                [subject, .string(action.rawValue), .dictionary(key: .string, value: .string, []), .uint32(1), .string("")],
                timeout: .seconds(120))
        } catch let error as DBusError where Self.noPolkit.contains(error.name.rawValue) {
            return try await requireRoot(sender, action)
        } catch {
            throw .notAuthorized("polkit could not decide on \(action.rawValue): \(error)")
        }
        guard reply.first?.structureFields?.first == .boolean(true) else {
            throw .notAuthorized("not authorized: polkit refused \(action.rawValue)")
        }
    }

    /// The errors that mean no polkit is on the bus: not running and not activatable.
    static let noPolkit: Set<String> = [DBusError.Name.serviceUnknown.rawValue, DBusError.Name.nameHasNoOwner.rawValue]

    private func requireRoot(_ sender: String, _ action: Action) async throws(ManagerError) {
        let uid: UInt32?
        do {
            uid = try await CallerIdentity.uid(of: sender, on: bus)
        } catch {
            throw .internal("asking the bus who called: \(error)")
        }
        guard uid == 0 else { throw .notAuthorized("not authorized: \(action.rawValue) needs root when there is no polkit") }
    }
}
