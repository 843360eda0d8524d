// SPDX-License-Identifier: GPL-3.0-or-later

/// A D-Bus type, as a signature spells it (D-Bus Specification, "Type System").
package indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case array(DBusType)
    /// `a{KV}`: an array of dictionary entries; the key is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])
    case variant

    /// The signature of one complete type, e.g. `a{sv}`.
    package var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    package var description: String { signature }

    /// Basic types may be dictionary keys.
    package var isBasic: Bool {
        switch self {
        case .array, .dictionary, .structure, .variant: false
        default: true
        }
    }

    /// Parses one complete type; throws for anything else (trailing types included).
    package init(signature: String) throws(DBusError) {
        let types = try DBusType.parse(signature: signature)
        guard types.count == 1 else {
            throw DBusError(.invalidSignature, "'\(signature)' is not a single complete type")
        }
        self = types[0]
    }

    /// Parses a signature of any number of complete types (a message body's signature), enforcing
    /// the specification's limits: 255 bytes, 32 nested arrays, 32 nested structures.
    package static func parse(signature: String) throws(DBusError) -> [DBusType] {
        let bytes = Array(signature.utf8)
        guard bytes.count <= 255 else { throw DBusError(.invalidSignature, "signature longer than 255 bytes") }
        var parser = SignatureParser(bytes: bytes)
        var types = [DBusType]()
        while parser.position < bytes.count {
            types.append(try parser.completeType())
        }
        return types
    }

    /// The signature of a sequence of types.
    package static func signature(of types: [DBusType]) -> String {
        types.map(\.signature).joined()
    }
}

private struct SignatureParser {
    let bytes: [UInt8]
    var position = 0
    var arrayDepth = 0
    var structDepth = 0

    func fail(_ problem: String) -> DBusError {
        DBusError(.invalidSignature, "'\(String(decoding: bytes, as: UTF8.self))': \(problem) at \(position)")
    }

    mutating func completeType() throws(DBusError) -> DBusType {
        guard position < bytes.count else { throw fail("a type is missing") }
        let code = bytes[position]
        position += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            arrayDepth += 1
            defer { arrayDepth -= 1 }
            guard arrayDepth <= 32 else { throw fail("more than 32 nested arrays") }
            if position < bytes.count, bytes[position] == UInt8(ascii: "{") {
                position += 1
                let key = try completeType()
                guard key.isBasic else { throw fail("a dictionary key must be a basic type") }
                let value = try completeType()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "}") else { throw fail("a dictionary entry has two types") }
                position += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try completeType())
        case UInt8(ascii: "("):
            structDepth += 1
            defer { structDepth -= 1 }
            guard structDepth <= 32 else { throw fail("more than 32 nested structures") }
            var fields = [DBusType]()
            while position < bytes.count, bytes[position] != UInt8(ascii: ")") {
                fields.append(try completeType())
            }
            guard position < bytes.count else { throw fail("a structure is not closed") }
            guard !fields.isEmpty else { throw fail("an empty structure") }
            position += 1
            return .structure(fields)
        default:
            position -= 1
            throw fail("'\(Character(Unicode.Scalar(code)))' is not a type")
        }
    }
}
