// SPDX-License-Identifier: GPL-3.0-or-later

/// A message as Swift sees it: header fields and the decoded body. Built here and turned into a
/// libdbus message only on the connection's pump thread.
package struct DBusMessage: Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    package var kind: Kind
    package var path: String?
    package var interface: String?
    package var member: String?
    package var errorName: String?
    package var destination: String?
    package var sender: String?
    package var serial: UInt32 = 0
    package var replySerial: UInt32?
    /// A call that wants no reply.
    package var noReply = false
    package var body: [DBusValue]
    /// Where this message came in the order the connection received signals (1, 2, ...; 0 for
    /// messages made here). See `DBusConnection.lastDelivered(to:)`.
    package internal(set) var sequence: UInt64 = 0

    package init(
        kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil, errorName: String? = nil,
        destination: String? = nil, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.destination = destination
        self.body = body
    }

    /// A method call.
    package static func call(destination: String?, path: String, interface: String?, member: String, _ body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodCall, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// A signal; `destination` makes it unicast.
    package static func signal(path: String, interface: String, member: String, _ body: [DBusValue] = [], destination: String? = nil) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// The reply to this call.
    package func methodReturn(_ body: [DBusValue] = []) -> DBusMessage {
        var reply = DBusMessage(kind: .methodReturn, destination: sender, body: body)
        reply.replySerial = serial
        return reply
    }

    /// An error reply to this call.
    package func errorReply(_ error: DBusError) -> DBusMessage {
        var reply = DBusMessage(kind: .error, errorName: error.name.rawValue, destination: sender, body: [.string(error.message)])
        reply.replySerial = serial
        return reply
    }

    /// The body's signature.
    package var signature: String { DBusType.signature(of: body.map(\.type)) }

    /// The error this message carries, if it is one.
    package var error: DBusError? {
        guard kind == .error else { return nil }
        return DBusError(DBusError.Name(rawValue: errorName ?? DBusError.Name.failed.rawValue), body.first?.string ?? "")
    }

    /// The body, if its signature is `signature`; otherwise InvalidArgs naming both.
    package func arguments(_ signature: String) throws(DBusError) -> [DBusValue] {
        guard self.signature == signature else {
            throw DBusError(.invalidArgs, "expected arguments of signature '\(signature)', got '\(self.signature)'")
        }
        return body
    }

    /// Checks names and body before the message reaches libdbus.
    func validate() throws(DBusError) {
        if let path, !DBusNames.isValidObjectPath(path) { throw DBusError(.invalidArgs, "'\(path)' is not an object path") }
        if let interface, !DBusNames.isValidInterface(interface) { throw DBusError(.invalidArgs, "'\(interface)' is not an interface name") }
        if let member, !DBusNames.isValidMember(member) { throw DBusError(.invalidArgs, "'\(member)' is not a member name") }
        if let errorName, !DBusNames.isValidErrorName(errorName) { throw DBusError(.invalidArgs, "'\(errorName)' is not an error name") }
        if let destination, !DBusNames.isValidBusName(destination) { throw DBusError(.invalidArgs, "'\(destination)' is not a bus name") }
        switch kind {
        case .methodCall: guard path != nil, member != nil else { throw DBusError(.invalidArgs, "a method call needs a path and a member") }
        case .signal:
            guard path != nil, interface != nil, member != nil else { throw DBusError(.invalidArgs, "a signal needs a path, an interface and a member") }
        case .error: guard errorName != nil, replySerial != nil else { throw DBusError(.invalidArgs, "an error needs a name and a reply serial") }
        case .methodReturn: guard replySerial != nil else { throw DBusError(.invalidArgs, "a reply needs a reply serial") }
        }
        for value in body { try value.validate() }
    }

    package var description: String {
        var parts = ["\(kind)"]
        if let sender { parts.append("sender=\(sender)") }
        if let destination { parts.append("destination=\(destination)") }
        if let path { parts.append("path=\(path)") }
        if let interface { parts.append("interface=\(interface)") }
        if let member { parts.append("member=\(member)") }
        if let errorName { parts.append("error=\(errorName)") }
        parts.append("signature=\(signature)")
        return parts.joined(separator: " ")
    }
}
