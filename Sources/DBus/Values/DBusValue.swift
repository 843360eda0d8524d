// SPDX-License-Identifier: GPL-3.0-or-later

/// A D-Bus value with its type. Containers carry their element types, so an empty array or
/// dictionary still has a signature. An array's elements are `DBusValue.Elements`, which holds an
/// `ay` as plain bytes (see there).
package indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(DBusFileDescriptor)
    case array(element: DBusType, Elements)
    /// Entries in wire order; keys are basic values.
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    package struct DictionaryEntry: Hashable, Sendable {
        package var key: DBusValue
        package var value: DBusValue
        package init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's type.
    package var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// An array's length on the wire is at most 64 MiB (specification, "Valid Signatures").
    static let maximumArrayLength = 67_108_864

    /// An array of `values` (an `ay` of `.byte` values is kept as bytes, as `.bytes(_:)` makes it).
    package static func array(element: DBusType, _ values: [DBusValue]) -> DBusValue {
        .array(element: element, Elements(values))
    }

    /// Checks what libdbus would refuse (and abort on): element types that differ from the declared
    /// one, malformed object paths and signatures, strings with NUL, nesting past the limits.
    package func validate() throws(DBusError) {
        try validate(depth: 0)
    }

    private func validate(depth: Int) throws(DBusError) {
        guard depth <= 64 else { throw DBusError(.invalidArgs, "values nested more than 64 deep") }
        switch self {
        case .string(let text):
            guard !text.utf8.contains(0) else { throw DBusError(.invalidArgs, "a string contains NUL") }
        case .objectPath(let path):
            guard DBusNames.isValidObjectPath(path) else { throw DBusError(.invalidArgs, "'\(path)' is not an object path") }
        case .signature(let text):
            _ = try DBusType.parse(signature: text)
        case .array(let element, let values):
            _ = try DBusType(signature: element.signature)
            if let bytes = values.bytes, !bytes.isEmpty {
                guard element == .byte else { throw DBusError(.invalidArgs, "an array of \(element) holds bytes") }
                // libdbus aborts on a longer fixed array (DBUS_MAXIMUM_ARRAY_LENGTH).
                guard bytes.count <= Self.maximumArrayLength else {
                    throw DBusError(.limitsExceeded, "an array of \(bytes.count) bytes (at most \(Self.maximumArrayLength))")
                }
                return
            }
            for value in values {
                guard value.type == element else {
                    throw DBusError(.invalidArgs, "an array of \(element) holds a \(value.type)")
                }
                try value.validate(depth: depth + 1)
            }
        case .dictionary(let key, let valueType, let entries):
            _ = try DBusType(signature: DBusType.dictionary(key: key, value: valueType).signature)
            for entry in entries {
                guard entry.key.type == key, entry.value.type == valueType else {
                    throw DBusError(.invalidArgs, "a dictionary of {\(key)\(valueType)} holds {\(entry.key.type)\(entry.value.type)}")
                }
                try entry.key.validate(depth: depth + 1)
                try entry.value.validate(depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError(.invalidArgs, "an empty structure") }
            for field in fields { try field.validate(depth: depth + 1) }
        case .variant(let inner):
            try inner.validate(depth: depth + 1)
        default:
            break
        }
    }
}
