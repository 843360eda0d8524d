// SPDX-License-Identifier: GPL-3.0-or-later

/// Typed reading: each accessor is `nil` when the value has another type, so a caller can refuse
/// what a peer sent instead of trapping on it.
extension DBusValue {
    package var string: String? { if case .string(let value) = self { value } else { nil } }
    package var objectPath: String? { if case .objectPath(let value) = self { value } else { nil } }
    package var boolean: Bool? { if case .boolean(let value) = self { value } else { nil } }
    package var byte: UInt8? { if case .byte(let value) = self { value } else { nil } }
    package var int16: Int16? { if case .int16(let value) = self { value } else { nil } }
    package var uint16: UInt16? { if case .uint16(let value) = self { value } else { nil } }
    package var int32: Int32? { if case .int32(let value) = self { value } else { nil } }
    package var uint32: UInt32? { if case .uint32(let value) = self { value } else { nil } }
    package var int64: Int64? { if case .int64(let value) = self { value } else { nil } }
    package var uint64: UInt64? { if case .uint64(let value) = self { value } else { nil } }
    package var double: Double? { if case .double(let value) = self { value } else { nil } }
    /// The content of a variant.
    package var variant: DBusValue? { if case .variant(let value) = self { value } else { nil } }
    package var arrayElements: [DBusValue]? { if case .array(_, let values) = self { Array(values) } else { nil } }
    package var structureFields: [DBusValue]? { if case .structure(let fields) = self { fields } else { nil } }

    /// An `ay` as bytes (no copy: the array keeps them as bytes).
    package var bytes: [UInt8]? {
        guard case .array(.byte, let values) = self else { return nil }
        return values.bytes ?? values.map { $0.byte ?? 0 }
    }

    /// An `as` as strings.
    package var strings: [String]? {
        guard case .array(.string, let values) = self else { return nil }
        return values.compactMap(\.string)
    }

    /// An `a{s?}` keyed by its strings; a later duplicate key wins.
    package var stringKeyed: [String: DBusValue]? {
        guard case .dictionary(.string, _, let entries) = self else { return nil }
        var result = [String: DBusValue]()
        for entry in entries { if let key = entry.key.string { result[key] = entry.value } }
        return result
    }

    /// An `a{o?}` keyed by object path.
    package var pathKeyed: [String: DBusValue]? {
        guard case .dictionary(.objectPath, _, let entries) = self else { return nil }
        var result = [String: DBusValue]()
        for entry in entries { if let key = entry.key.objectPath { result[key] = entry.value } }
        return result
    }

    /// `a{sv}` from a Swift dictionary, keys sorted so the wire form is stable.
    package static func properties(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            values.sorted { $0.key < $1.key }.map { DictionaryEntry(.string($0.key), .variant($0.value)) })
    }

    /// `ay`.
    package static func bytes(_ bytes: some Sequence<UInt8>) -> DBusValue {
        .array(element: .byte, Elements(bytes: Array(bytes)))
    }

    /// `as`.
    package static func strings(_ strings: some Sequence<String>) -> DBusValue {
        .array(element: .string, strings.map { .string($0) })
    }
}
