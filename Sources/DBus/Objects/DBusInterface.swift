// SPDX-License-Identifier: GPL-3.0-or-later

/// One interface of an exported object, declared as a table (BlueZ's `GDBusMethodTable` idea):
/// the same table routes calls, checks their signatures, serves the properties and writes the
/// introspection XML.
package struct DBusInterface: Sendable {
    package var name: String
    package var methods: [DBusMethod]
    package var properties: [DBusProperty]
    package var signals: [DBusSignal]

    package init(name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    func validate() throws(DBusError) {
        guard DBusNames.isValidInterface(name) else { throw DBusError(.invalidArgs, "'\(name)' is not an interface name") }
        for member in methods.map(\.name) + properties.map(\.name) + signals.map(\.name) where !DBusNames.isValidMember(member) {
            throw DBusError(.invalidArgs, "'\(member)' is not a member name")
        }
    }
}

/// A named, typed argument (for signatures and introspection).
package struct DBusArgument: Sendable, Hashable {
    package var name: String
    package var type: DBusType

    package init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// What a method handler gets: the call (sender, path, arguments already checked against the
/// declared input signature).
package struct DBusMethodCall: Sendable {
    package var message: DBusMessage
    package var arguments: [DBusValue] { message.body }
    package var sender: String { message.sender ?? "" }
    package var path: String { message.path ?? "/" }
}

package struct DBusMethod: Sendable {
    package typealias Handler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

    package var name: String
    package var inputs: [DBusArgument]
    package var outputs: [DBusArgument]
    package var handler: Handler

    /// - Parameter handler: returns the reply's body, which must match `outputs`; throws
    ///   `DBusError` to reply with that error (anything else replies `org.freedesktop.DBus.Error.Failed`).
    package init(_ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: @escaping Handler) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }

    var inputSignature: String { DBusType.signature(of: inputs.map(\.type)) }
    var outputSignature: String { DBusType.signature(of: outputs.map(\.type)) }
}

package struct DBusProperty: Sendable {
    package enum Access: String, Sendable {
        case read, write, readwrite
    }

    package var name: String
    package var type: DBusType
    package var access: Access
    /// Whether a change is announced with PropertiesChanged (the introspection says so otherwise).
    package var emitsChanged: Bool
    package var get: @Sendable () async throws -> DBusValue
    package var set: (@Sendable (DBusValue) async throws -> Void)?
    /// Who may read it, by the caller's bus name; nil: anyone the bus lets call. Get answers
    /// others AccessDenied, GetAll leaves it out for them, and it is never in GetManagedObjects
    /// or InterfacesAdded.
    package var readableBy: (@Sendable (String) async -> Bool)?

    package init(
        _ name: String, _ type: DBusType, emitsChanged: Bool = true, readableBy: (@Sendable (String) async -> Bool)? = nil,
        get: @escaping @Sendable () async throws -> DBusValue, set: (@Sendable (DBusValue) async throws -> Void)? = nil
    ) {
        self.name = name
        self.type = type
        self.access = set == nil ? .read : .readwrite
        self.emitsChanged = emitsChanged
        self.readableBy = readableBy
        self.get = get
        self.set = set
    }
}

package struct DBusSignal: Sendable {
    package var name: String
    package var arguments: [DBusArgument]

    package init(_ name: String, _ arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}
