// SPDX-License-Identifier: GPL-3.0-or-later

/// The protobuf wire format over a range of a byte array, read in place: what export.bin needs,
/// by SwiftProtobuf's rules (1.39, `BinaryDecoder`), so that a file reads as it did when
/// SwiftProtobuf decoded it whole:
///
/// - a tag is a varint below 2³², its field number at least 1, its wire type 0…5;
/// - a varint is at most 10 bytes; a length at most 2³¹ − 2 and within the bytes left;
/// - a known field with another wire type than its own is an unknown field, and unknown fields
///   (groups included, nested at most 100 deep) are skipped, their encoding checked.
struct WireReader {
    enum Wire: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5
    }

    struct Failure: Error {
        var reason: String
        /// Set when the key limit stopped the reading: the count reached (`KeyFileError.tooManyKeys`).
        var tooManyKeys: Int? = nil
        static let truncated = Failure(reason: "truncated")
        static let malformed = Failure(reason: "malformed protobuf")

        /// A message longer than any real one, which a stream would have to hold whole.
        static func oversized(_ what: String, _ count: Int) -> Failure {
            Failure(reason: "\(what) is a message of \(count) bytes, over the \(KeyFileLimits.maximumMessageBytes)-byte limit")
        }
    }

    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int

    init(_ bytes: [UInt8], from start: Int, to end: Int) {
        self.bytes = bytes
        position = start
        self.end = end
    }

    var isAtEnd: Bool { position >= end }

    /// The next field's number and wire type; nil at the end.
    mutating func tag() throws(Failure) -> (field: UInt32, wire: Wire)? {
        guard !isAtEnd else { return nil }
        let value = try varint()
        guard value < UInt64(UInt32.max), value >> 3 >= 1, let wire = Wire(rawValue: UInt8(value & 7)) else { throw .malformed }
        return (UInt32(value >> 3), wire)
    }

    mutating func varint() throws(Failure) -> UInt64 {
        guard position < end else { throw .truncated }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end, shift <= 63 else { throw .malformed }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    mutating func fixed64() throws(Failure) -> UInt64 {
        guard end - position >= 8 else { throw .truncated }
        var value: UInt64 = 0
        for offset in (0..<8).reversed() { value = value << 8 | UInt64(bytes[position + offset]) }
        position += 8
        return value
    }

    /// The body of a length-delimited field, as a range of `bytes`.
    mutating func lengthDelimited() throws(Failure) -> Range<Int> {
        let length = try varint()
        guard length < 0x7FFF_FFFF else { throw .malformed }
        guard length <= UInt64(end - position) else { throw .truncated }
        let start = position
        position += Int(length)
        return start..<position
    }

    /// A string field: UTF-8, at most `limit` bytes (else `Failure` naming `name` and the limit).
    mutating func string(_ name: String, limit: Int) throws(Failure) -> String {
        let range = try lengthDelimited()
        guard range.count <= limit else { throw Failure(reason: "\(name) is \(range.count) bytes, over the limit of \(limit)") }
        guard let text = String(validating: bytes[range], as: UTF8.self) else { throw Failure(reason: "\(name) is not UTF-8") }
        return text
    }

    /// Skips the value of a field whose tag was just read, checking its encoding.
    mutating func skip(_ field: UInt32, _ wire: Wire, depth: Int = 1) throws(Failure) {
        switch wire {
        case .varint: _ = try varint()
        case .fixed64: try advance(8)
        case .fixed32: try advance(4)
        case .lengthDelimited: _ = try lengthDelimited()
        case .endGroup: throw .truncated
        case .startGroup:
            guard depth < 100 else { throw .malformed }
            while true {
                guard let inner = try tag() else { throw .truncated }
                if inner.wire == .endGroup {
                    guard inner.field == field else { throw .malformed }
                    return
                }
                try skip(inner.field, inner.wire, depth: depth + 1)
            }
        }
    }

    private mutating func advance(_ count: Int) throws(Failure) {
        guard end - position >= count else { throw .truncated }
        position += count
    }
}

extension ExportBinary {
    /// `value` as a protobuf varint: for files made by hand (tests, hostile files of gaen-bench).
    package static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes = [UInt8]()
        repeat {
            bytes.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value != 0
        return bytes
    }
}
