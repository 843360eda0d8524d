// SPDX-License-Identifier: GPL-3.0-or-later

/// One interface of an exported object, declared as a table (BlueZ's `GDBusMethodTable` idea):
/// the same table routes calls, checks their signatures, serves the properties and writes the
/// introspection XML.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignal]

    public init(name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignal] = []) {
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
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var type: DBusType

    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// What a method handler gets: the call (sender, path, arguments already checked against the
/// declared input signature).
public struct DBusMethodCall: Sendable {
    public var message: DBusMessage
    public var arguments: [DBusValue] { message.body }
    public var sender: String { message.sender ?? "" }
    public var path: String { message.path ?? "/" }
}

public struct DBusMethod: Sendable {
    public typealias Handler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

    public var name: String
    public var inputs: [DBusArgument]
    public var outputs: [DBusArgument]
    public var handler: Handler

    /// - Parameter handler: returns the reply's body, which must match `outputs`; throws
    ///   `DBusError` to reply with that error (anything else replies `org.freedesktop.DBus.Error.Failed`).
    public init(_ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: @escaping Handler) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }

    var inputSignature: String { DBusType.signature(of: inputs.map(\.type)) }
    var outputSignature: String { DBusType.signature(of: outputs.map(\.type)) }
}

public struct DBusProperty: Sendable {
    public enum Access: String, Sendable {
        case read, write, readwrite
    }

    public var name: String
    public var type: DBusType
    public var access: Access
    /// Whether a change is announced with PropertiesChanged (the introspection says so otherwise).
    public var emitsChanged: Bool
    public var get: @Sendable () async throws -> DBusValue
    public var set: (@Sendable (DBusValue) async throws -> Void)?

    public init(
        _ name: String, _ type: DBusType, emitsChanged: Bool = true, get: @escaping @Sendable () async throws -> DBusValue,
        set: (@Sendable (DBusValue) async throws -> Void)? = nil
    ) {
        self.name = name
        self.type = type
        self.access = set == nil ? .read : .readwrite
        self.emitsChanged = emitsChanged
        self.get = get
        self.set = set
    }
}

public struct DBusSignal: Sendable {
    public var name: String
    public var arguments: [DBusArgument]

    public init(_ name: String, _ arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}
