// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
import Synchronization

extension DBusConnection {
    /// Exports an object at `path` with `interfaces` (replacing what was there). Under an object
    /// manager, InterfacesAdded announces it.
    package func export(_ path: String, interfaces: [DBusInterface]) async throws(DBusError) {
        guard DBusNames.isValidObjectPath(path) else { throw DBusError(.invalidArgs, "'\(path)' is not an object path") }
        for interface in interfaces { try interface.validate() }
        let manager = state.withLock { state in
            state.objects.objects[path] = interfaces
            return state.objects.manager(covering: path)
        }
        if let manager {
            var added = [DBusValue.DictionaryEntry]()
            for interface in interfaces { added.append(.init(.string(interface.name), await Self.properties(of: interface))) }
            try emit(
                path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesAdded",
                [.objectPath(path), .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), added)])
        }
    }

    /// Removes the object at `path`; under an object manager, InterfacesRemoved announces it.
    package func unexport(_ path: String) throws(DBusError) {
        let (removed, manager) = state.withLock { state in
            (state.objects.objects.removeValue(forKey: path), state.objects.manager(covering: path))
        }
        if let removed, let manager {
            try emit(
                path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesRemoved",
                [.objectPath(path), .strings(removed.map(\.name))])
        }
    }

    /// Serves org.freedesktop.DBus.ObjectManager at `path` for the objects below it.
    package func addObjectManager(at path: String) throws(DBusError) {
        guard DBusNames.isValidObjectPath(path) else { throw DBusError(.invalidArgs, "'\(path)' is not an object path") }
        state.withLock { _ = $0.objects.managers.insert(path) }
    }

    /// The interface's properties anyone may read as `a{sv}`; a getter that fails leaves its
    /// property out.
    static func properties(of interface: DBusInterface) async -> DBusValue {
        await properties(interface.properties.filter { $0.access != .write && $0.readableBy == nil })
    }

    static func properties(_ properties: [DBusProperty]) async -> DBusValue {
        var values = [String: DBusValue]()
        for property in properties {
            if let value = try? await property.get(), value.type == property.type { values[property.name] = value }
        }
        return .properties(values)
    }

    /// Runs the handler (or the standard interface) for an incoming call and sends its reply.
    func answer(_ call: DBusMessage, route: ObjectTable.Route) async {
        let result: Result<[DBusValue], DBusError>
        switch route {
        case .failure(let error):
            result = .failure(error)
        case .introspect(let interfaces, let children):
            result = .success([.string(Introspection.xml(interfaces: interfaces, children: children))])
        case .getProperty(let property):
            result = await Self.invoke {
                if let readableBy = property.readableBy, await !readableBy(call.sender ?? "") {
                    throw DBusError(.accessDenied, "\(property.name) is not readable by this caller")
                }
                let value = try await property.get()
                guard value.type == property.type else { throw DBusError(.failed, "\(property.name) produced a \(value.type)") }
                return [.variant(value)]
            }
        case .getAll(let properties):
            var readable = [DBusProperty]()
            for property in properties {
                if let readableBy = property.readableBy, await !readableBy(call.sender ?? "") { continue }
                readable.append(property)
            }
            result = .success([await Self.properties(readable)])
        case .setProperty(let property, let interface, let value):
            result = await Self.invoke {
                try await property.set!(value)
                if property.emitsChanged, let path = call.path {
                    try? self.emitPropertiesChanged(path: path, interface: interface, changed: [property.name: try await property.get()])
                }
                return []
            }
        case .managedObjects(let objects):
            var entries = [DBusValue.DictionaryEntry]()
            for (path, interfaces) in objects {
                var perInterface = [DBusValue.DictionaryEntry]()
                for interface in interfaces { perInterface.append(.init(.string(interface.name), await Self.properties(of: interface))) }
                entries.append(.init(.objectPath(path), .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), perInterface)))
            }
            result = .success([.dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)), entries)])
        case .method(let method):
            result = await Self.invoke {
                let body = try await method.handler(DBusMethodCall(message: call))
                let signature = DBusType.signature(of: body.map(\.type))
                guard signature == method.outputSignature else {
                    throw DBusError(.failed, "\(method.name) returned '\(signature)' instead of '\(method.outputSignature)'")
                }
                return body
            }
        }
        guard !call.noReply else { return }
        switch result {
        case .success(let body):
            do {
                try send(call.methodReturn(body))
            } catch {
                try? send(call.errorReply(error))
            }
        case .failure(let error):
            try? send(call.errorReply(error))
        }
    }

    private static func invoke(_ body: () async throws -> [DBusValue]) async -> Result<[DBusValue], DBusError> {
        do {
            return .success(try await body())
        } catch let error as DBusError {
            return .failure(error)
        } catch {
            return .failure(DBusError(.failed, "\(error)"))
        }
    }
}
