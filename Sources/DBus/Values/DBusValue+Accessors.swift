// SPDX-License-Identifier: GPL-3.0-or-later

/// Typed reading: each accessor is `nil` when the value has another type, so a caller can refuse
/// what a peer sent instead of trapping on it.
extension DBusValue {
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var objectPath: String? { if case .objectPath(let value) = self { value } else { nil } }
    public var boolean: Bool? { if case .boolean(let value) = self { value } else { nil } }
    public var byte: UInt8? { if case .byte(let value) = self { value } else { nil } }
    public var int16: Int16? { if case .int16(let value) = self { value } else { nil } }
    public var uint16: UInt16? { if case .uint16(let value) = self { value } else { nil } }
    public var int32: Int32? { if case .int32(let value) = self { value } else { nil } }
    public var uint32: UInt32? { if case .uint32(let value) = self { value } else { nil } }
    public var int64: Int64? { if case .int64(let value) = self { value } else { nil } }
    public var uint64: UInt64? { if case .uint64(let value) = self { value } else { nil } }
    public var double: Double? { if case .double(let value) = self { value } else { nil } }
    /// The content of a variant.
    public var variant: DBusValue? { if case .variant(let value) = self { value } else { nil } }
    public var arrayElements: [DBusValue]? { if case .array(_, let values) = self { Array(values) } else { nil } }
    public var structureFields: [DBusValue]? { if case .structure(let fields) = self { fields } else { nil } }

    /// An `ay` as bytes (no copy: the array keeps them as bytes).
    public var bytes: [UInt8]? {
        guard case .array(.byte, let values) = self else { return nil }
        return values.bytes ?? values.map { $0.byte ?? 0 }
    }

    /// An `as` as strings.
    public var strings: [String]? {
        guard case .array(.string, let values) = self else { return nil }
        return values.compactMap(\.string)
    }

    /// An `a{s?}` keyed by its strings; a later duplicate key wins.
    public var stringKeyed: [String: DBusValue]? {
        guard case .dictionary(.string, _, let entries) = self else { return nil }
        var result = [String: DBusValue]()
        for entry in entries { if let key = entry.key.string { result[key] = entry.value } }
        return result
    }

    /// An `a{o?}` keyed by object path.
    public var pathKeyed: [String: DBusValue]? {
        guard case .dictionary(.objectPath, _, let entries) = self else { return nil }
        var result = [String: DBusValue]()
        for entry in entries { if let key = entry.key.objectPath { result[key] = entry.value } }
        return result
    }

    /// `a{sv}` from a Swift dictionary, keys sorted so the wire form is stable.
    public static func properties(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            values.sorted { $0.key < $1.key }.map { DictionaryEntry(.string($0.key), .variant($0.value)) })
    }

    /// `ay`.
    public static func bytes(_ bytes: some Sequence<UInt8>) -> DBusValue {
        .array(element: .byte, Elements(bytes: Array(bytes)))
    }

    /// `as`.
    public static func strings(_ strings: some Sequence<String>) -> DBusValue {
        .array(element: .string, strings.map { .string($0) })
    }
}
