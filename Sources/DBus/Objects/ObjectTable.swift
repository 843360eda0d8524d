// SPDX-License-Identifier: GPL-3.0-or-later

/// The objects a connection exports, and how a call to them is answered: the standard interfaces
/// (Introspectable, Properties, ObjectManager) from the tables, everything else by the handlers.
struct ObjectTable: Sendable {
    var objects: [String: [DBusInterface]] = [:]
    var managers: Set<String> = []

    static let managedObjectsType = DBusType.dictionary(
        key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)))

    /// The next path elements below `path`, sorted.
    func children(of path: String) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var names = Set<String>()
        for candidate in objects.keys where candidate.hasPrefix(prefix) && candidate != path {
            if let first = candidate.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(first)) }
        }
        for candidate in managers where candidate.hasPrefix(prefix) && candidate != path {
            if let first = candidate.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }

    /// The manager whose subtree holds `path` (the deepest one), if any.
    func manager(covering path: String) -> String? {
        managers.filter { $0 != path && DBusNames.path(path, isWithin: $0) }.max { $0.count < $1.count }
    }

    /// What answers a call: a reply body or an error.
    enum Route {
        case introspect(interfaces: [DBusInterface], children: [String])
        case getProperty(DBusProperty)
        case getAll([DBusProperty])
        case setProperty(DBusProperty, interface: String, value: DBusValue)
        case managedObjects([(path: String, interfaces: [DBusInterface])])
        case method(DBusMethod)
        case failure(DBusError)
    }

    /// The header fields that route a call.
    struct CallHeader {
        var path: String?
        var interface: String?
        var member: String?
        var signature: String
    }

    func route(_ call: DBusMessage) -> Route {
        route(CallHeader(path: call.path, interface: call.interface, member: call.member, signature: call.signature), body: call.body)
            ?? .failure(DBusError(.failed, "a call routed without its arguments"))
    }

    /// The error a call gets from its header alone (no such object, interface or method, arguments
    /// of another signature), so that its body need not be decoded; nil if the body decides.
    func refusal(_ header: CallHeader) -> DBusError? {
        if case .failure(let error)? = route(header, body: nil) { error } else { nil }
    }

    /// nil only without `body`, when the body decides (which property Get or Set names).
    private func route(_ call: CallHeader, body: [DBusValue]?) -> Route? {
        let path = call.path ?? "/"
        let member = call.member ?? ""
        let exported = objects[path]
        let isManager = managers.contains(path)
        func noObject() -> Route { .failure(DBusError(.unknownObject, "no object at \(path)")) }

        switch call.interface {
        case StandardInterfaces.introspectable? where member != "Introspect":
            return .failure(DBusError(.unknownMethod, "no method \(member) in org.freedesktop.DBus.Introspectable"))
        case _ where call.interface == StandardInterfaces.introspectable || (call.interface == nil && member == "Introspect"):
            let children = children(of: path)
            guard exported != nil || isManager || !children.isEmpty || path == "/" else { return noObject() }
            let own = exported ?? []
            return .introspect(
                interfaces: Introspection.standard(properties: own.contains { !$0.properties.isEmpty }, objectManager: isManager) + own,
                children: children)
        case StandardInterfaces.properties?:
            guard let exported else { return noObject() }
            return routeProperties(call, member: member, body: body, interfaces: exported)
        case StandardInterfaces.objectManager? where isManager:
            guard member == "GetManagedObjects" else { return .failure(DBusError(.unknownMethod, "no method \(member) in org.freedesktop.DBus.ObjectManager")) }
            guard call.signature == "" else { return .failure(DBusError(.invalidArgs, "GetManagedObjects takes no arguments, got '\(call.signature)'")) }
            let managed = objects.filter { $0.key != path && DBusNames.path($0.key, isWithin: path) }.sorted { $0.key < $1.key }
            return .managedObjects(managed.map { ($0.key, $0.value) })
        default:
            guard let exported else { return noObject() }
            let candidates = call.interface.map { name in exported.filter { $0.name == name } } ?? exported
            if let name = call.interface, candidates.isEmpty {
                return .failure(DBusError(.unknownInterface, "\(path) has no interface \(name)"))
            }
            guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == member } }).first else {
                return .failure(DBusError(.unknownMethod, "\(path) has no method \(member)\(call.interface.map { " in \($0)" } ?? "")"))
            }
            guard call.signature == method.inputSignature else {
                return .failure(DBusError(.invalidArgs, "\(member) takes '\(method.inputSignature)', got '\(call.signature)'"))
            }
            return .method(method)
        }
    }

    private func routeProperties(_ call: CallHeader, member: String, body: [DBusValue]?, interfaces: [DBusInterface]) -> Route? {
        switch (member, call.signature) {
        case ("Get", "ss"), ("GetAll", "s"), ("Set", "ssv"):
            guard let body else { return nil }
            return routeProperties(member: member, body: body, interfaces: interfaces)
        case ("Get", _), ("GetAll", _), ("Set", _):
            let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"][member]!
            return .failure(DBusError(.invalidArgs, "\(member) takes '\(expected)', got '\(call.signature)'"))
        default:
            return .failure(DBusError(.unknownMethod, "no method \(member) in org.freedesktop.DBus.Properties"))
        }
    }

    /// Get, GetAll or Set with the right signature: what its arguments name.
    private func routeProperties(member: String, body: [DBusValue], interfaces: [DBusInterface]) -> Route {
        func interface(_ name: String) -> DBusInterface? { interfaces.first { $0.name == name } }
        let strings = body.map(\.string)
        switch member {
        case "Get":
            let (interfaceName, propertyName) = (strings[0]!, strings[1]!)
            guard let found = interface(interfaceName) else { return .failure(DBusError(.unknownInterface, "no interface \(interfaceName)")) }
            guard let property = found.properties.first(where: { $0.name == propertyName }) else {
                return .failure(DBusError(.unknownProperty, "\(interfaceName) has no property \(propertyName)"))
            }
            guard property.access != .write else { return .failure(DBusError(.accessDenied, "\(propertyName) is write-only")) }
            return .getProperty(property)
        case "GetAll":
            // An interface the object lacks has no properties (what GDBus and sd-bus answer too).
            return .getAll(interface(strings[0]!)?.properties.filter { $0.access != .write } ?? [])
        default:
            let (interfaceName, propertyName) = (strings[0]!, strings[1]!)
            guard case .variant(let value) = body[2] else { return .failure(DBusError(.invalidArgs, "Set takes a variant")) }
            guard let found = interface(interfaceName) else { return .failure(DBusError(.unknownInterface, "no interface \(interfaceName)")) }
            guard let property = found.properties.first(where: { $0.name == propertyName }) else {
                return .failure(DBusError(.unknownProperty, "\(interfaceName) has no property \(propertyName)"))
            }
            guard property.access != .read else { return .failure(DBusError(.propertyReadOnly, "\(propertyName) is read-only")) }
            guard value.type == property.type else {
                return .failure(DBusError(.invalidArgs, "\(propertyName) is of type '\(property.type)', got '\(value.type)'"))
            }
            return .setProperty(property, interface: interfaceName, value: value)
        }
    }
}
