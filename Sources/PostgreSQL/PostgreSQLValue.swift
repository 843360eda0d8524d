// SPDX-License-Identifier: GPL-3.0-or-later

/// A parameter or a result value. Parameters go to the server in binary as `int8`, `text` and
/// `bytea` (OIDs 20, 25, 17), NULL with no type so the server infers it; results come back by
/// their column's type: `int2`/`int4`/`int8` as ``integer``, `text`/`varchar` as ``text``,
/// `bytea` as ``blob``. Any other column type is an error naming its OID (cast it in the SQL).
package enum PostgreSQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    package var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    package var text: String? { if case .text(let value) = self { value } else { nil } }
    package var blob: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
}

/// The type OIDs this module reads and writes (pg_type.oid; fixed since PostgreSQL 7, listed in
/// the server's `pg_type.dat`). The corresponding C constants are `INT8OID` and so on in the
/// server's `catalog/pg_type_d.h`, which libpq-dev does not ship.
enum TypeOID {
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let varchar: UInt32 = 1043
}

extension PostgreSQLValue {
    /// The parameter's type OID (0: NULL, let the server infer) and its bytes in binary format.
    var binaryParameter: (type: UInt32, bytes: [UInt8]?) {
        switch self {
        case .null: (0, nil)
        // int8's binary send format is the 8 bytes in network order (int8send in the server).
        case .integer(let number): (TypeOID.int8, withUnsafeBytes(of: number.bigEndian) { Array($0) })
        case .text(let text): (TypeOID.text, Array(text.utf8))
        case .blob(let bytes): (TypeOID.bytea, bytes)
        }
    }

    /// A column's value from its binary result format, or nil when the type is not one this
    /// module decodes (or the length does not fit it).
    init?(binary bytes: UnsafeRawBufferPointer, type: UInt32) {
        switch type {
        case TypeOID.int2, TypeOID.int4, TypeOID.int8:
            guard [2, 4, 8].contains(bytes.count) else { return nil }
            // Big-endian, two's complement: sign-extend from the first byte.
            var number: Int64 = bytes[0] & 0x80 == 0 ? 0 : -1
            for byte in bytes { number = number << 8 | Int64(byte) }
            self = .integer(number)
        case TypeOID.text, TypeOID.varchar: self = .text(String(decoding: bytes, as: UTF8.self))
        case TypeOID.bytea: self = .blob(Array(bytes))
        default: return nil
        }
    }
}
