// SPDX-License-Identifier: GPL-3.0-or-later

/// A signal match rule: sent to the bus with AddMatch, and applied again on arrival, since the
/// bus delivers what any of the connection's rules match.
package struct DBusMatchRule: Sendable, Hashable {
    /// A unique or well-known name; a well-known one matches its current owner.
    package var sender: String?
    package var interface: String?
    package var member: String?
    package var path: String?
    /// The path and everything below it.
    package var pathNamespace: String?
    /// The first argument, when it is a string (NameOwnerChanged's name, PropertiesChanged's interface).
    package var arg0: String?

    package init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: String? = nil, pathNamespace: String? = nil,
        arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule as the bus reads it.
    package var text: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            // Values are names and paths, validated below; a quote cannot occur in them.
            if let value { parts.append("\(key)='\(value)'") }
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    func validate() throws(DBusError) {
        if let sender, !DBusNames.isValidBusName(sender) { throw DBusError(.invalidArgs, "'\(sender)' is not a bus name") }
        if let interface, !DBusNames.isValidInterface(interface) { throw DBusError(.invalidArgs, "'\(interface)' is not an interface name") }
        if let member, !DBusNames.isValidMember(member) { throw DBusError(.invalidArgs, "'\(member)' is not a member name") }
        for path in [path, pathNamespace].compactMap({ $0 }) where !DBusNames.isValidObjectPath(path) {
            throw DBusError(.invalidArgs, "'\(path)' is not an object path")
        }
        if let arg0, arg0.contains("'") || arg0.contains("\\") { throw DBusError(.invalidArgs, "arg0 '\(arg0)' has a quote or a backslash") }
    }

    /// Whether `message` matches; `owner` resolves a well-known sender to its unique name.
    func matches(_ message: DBusMessage, owner: (String) -> String?) -> Bool {
        matches(
            kind: message.kind, sender: message.sender, interface: message.interface, member: message.member, path: message.path,
            arg0: { message.body.first?.string }, owner: owner)
    }

    /// `matches` on header fields, before a body is decoded (`arg0` is read only if the rule has one).
    func matches(
        kind: DBusMessage.Kind, sender messageSender: String?, interface messageInterface: String?, member messageMember: String?,
        path messagePath: String?, arg0 messageArg0: () -> String?, owner: (String) -> String?
    ) -> Bool {
        guard kind == .signal else { return false }
        if let sender {
            let expected = sender.hasPrefix(":") || sender == StandardInterfaces.bus ? sender : owner(sender)
            // The bus itself sends as org.freedesktop.DBus.
            guard let expected, messageSender == expected else { return false }
        }
        if let interface, messageInterface != interface { return false }
        if let member, messageMember != member { return false }
        if let path, messagePath != path { return false }
        if let pathNamespace, !DBusNames.path(messagePath ?? "", isWithin: pathNamespace) { return false }
        if let arg0, messageArg0() != arg0 { return false }
        return true
    }
}
