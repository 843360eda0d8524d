// SPDX-License-Identifier: GPL-3.0-or-later

/// The protobuf wire format over the bytes at hand, read in place: what export.bin needs, by
/// SwiftProtobuf's rules (1.39, `BinaryDecoder`), so that a file reads as it did when SwiftProtobuf
/// decoded it whole:
///
/// - a tag is a varint below 2³², its field number at least 1, its wire type 0…5;
/// - a varint is at most 10 bytes; a length at most 2³¹ − 2 and within the bytes left;
/// - a known field with another wire type than its own is an unknown field, and unknown fields
///   (groups included, nested at most 100 deep) are skipped, their encoding checked (`WireSkip`).
///
/// The bytes at hand may be all there is (`isComplete`: a message held whole, or export.bin's last
/// bytes), and running out is then truncation; or more may follow (a stream's window), and running
/// out throws `needMore`, for the caller to come back to the item's start with more bytes.
struct WireCursor {
    enum Wire: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5
    }

    let bytes: UnsafeRawBufferPointer
    var position = 0
    let isComplete: Bool

    init(_ bytes: UnsafeRawBufferPointer, isComplete: Bool) {
        self.bytes = bytes
        self.isComplete = isComplete
    }

    var available: Int { bytes.count - position }

    /// The next field's number and wire type; nil at the end of complete bytes.
    mutating func tag() throws(WireError) -> (field: UInt32, wire: Wire)? {
        guard available > 0 else {
            if isComplete { return nil }
            throw .needMore
        }
        let value = try varint()
        guard value < UInt64(UInt32.max), value >> 3 >= 1, let wire = Wire(rawValue: UInt8(value & 7)) else { throw .malformed }
        return (UInt32(value >> 3), wire)
    }

    mutating func varint() throws(WireError) -> UInt64 {
        guard available > 0 else { throw isComplete ? .truncated : .needMore }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var next = position
        while true {
            // A varint cut short is malformed, not truncated (SwiftProtobuf's word for it).
            guard shift <= 63 else { throw .malformed }
            guard next < bytes.count else { throw isComplete ? .malformed : .needMore }
            let byte = bytes[next]
            next += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                position = next
                return value
            }
            shift += 7
        }
    }

    mutating func fixed64() throws(WireError) -> UInt64 {
        let bytes = try take(8)
        var value: UInt64 = 0
        for offset in (0..<8).reversed() { value = value << 8 | UInt64(bytes[offset]) }
        return value
    }

    /// A length-delimited field's length, not yet checked against the bytes left.
    mutating func length() throws(WireError) -> Int {
        let length = try varint()
        guard length < 0x7FFF_FFFF else { throw .malformed }
        return Int(length)
    }

    /// The next `count` bytes, in place.
    mutating func take(_ count: Int) throws(WireError) -> UnsafeRawBufferPointer {
        guard count <= available else { throw isComplete ? .truncated : .needMore }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    }

    /// A length-delimited field's body, in place.
    mutating func lengthDelimited() throws(WireError) -> UnsafeRawBufferPointer {
        try take(try length())
    }

    /// A string field: UTF-8, at most `limit` bytes (else a failure naming `name` and the limit).
    mutating func string(_ name: String, limit: Int) throws(WireError) -> String {
        let body = try lengthDelimited()
        guard body.count <= limit else { throw .overLimit(name, body.count, limit) }
        return try Self.utf8(body, name)
    }

    static func utf8(_ body: UnsafeRawBufferPointer, _ name: String) throws(WireError) -> String {
        guard let text = String(validating: body, as: UTF8.self) else { throw .invalid("\(name) is not UTF-8") }
        return text
    }

    /// Skips the value of a field whose tag was just read, in complete bytes (a nested message).
    mutating func skip(_ field: UInt32, _ wire: Wire) throws(WireError) {
        var skip = try WireSkip(field, wire, &self)
        _ = try skip.advance(&self)
    }
}

/// Why bytes could not be read as export.bin, or (`needMore`) that they end inside an item and
/// more are coming.
enum WireError: Error {
    case needMore
    /// The 16 bytes before the protobuf are not `ExportBinary.header` (`KeyFileError.badHeader`).
    case badHeader
    /// A key or revised key message past `KeyFileLimits.maximumKeys`: the count reached.
    case tooManyKeys(Int)
    /// Bytes that break the wire format or a limit, with the reason.
    case invalid(String)

    static let truncated = WireError.invalid("truncated")
    static let malformed = WireError.invalid("malformed protobuf")

    static func overLimit(_ name: String, _ count: Int, _ limit: Int) -> WireError {
        .invalid("\(name) is \(count) bytes, over the limit of \(limit)")
    }

    /// A message longer than any real one, which a stream would have to hold whole.
    static func oversized(_ what: String, _ count: Int) -> WireError {
        .invalid("\(what) is a message of \(count) bytes, over the \(KeyFileLimits.maximumMessageBytes)-byte limit")
    }

    var reason: String {
        switch self {
        case .needMore: "more bytes needed"
        case .badHeader: "not an export.bin header"
        case .tooManyKeys(let count): "\(KeyFileError.tooManyKeys(count))"
        case .invalid(let reason): reason
        }
    }
}
