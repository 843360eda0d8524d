// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a hexadecimal string could not be decoded.
public enum HexDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The string has an odd number of digits, so its last byte is half missing.
    case oddLength(digits: Int)
    /// A character that is not a hexadecimal digit, at a zero-based character offset.
    case invalidCharacter(Character, offset: Int)
    /// The string decodes, but to the wrong number of bytes for what it stands for.
    case wrongLength(bytes: Int, expected: Int)

    public var description: String {
        switch self {
        case .oddLength(let digits):
            return "odd number of hex digits (\(digits)); every byte needs two"
        case .invalidCharacter(let character, let offset):
            return "'\(character)' at offset \(offset) is not a hex digit"
        case .wrongLength(let bytes, let expected):
            return "\(bytes) bytes, expected \(expected)"
        }
    }
}

/// Lowercase hexadecimal text, the form every tool and fixture of the project uses for bytes.
public enum Hex {
    /// Decodes upper- or lowercase hex digits; nothing else is accepted, not even spaces.
    public static func decode(_ text: some StringProtocol) throws(HexDecodingError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { throw .oddLength(digits: text.count) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]) else {
                throw .invalidCharacter(Character(Unicode.Scalar(utf8[index])), offset: index)
            }
            guard let low = nibble(utf8[index + 1]) else {
                throw .invalidCharacter(Character(Unicode.Scalar(utf8[index + 1])), offset: index + 1)
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Decodes and requires exactly `count` bytes.
    public static func decode(_ text: some StringProtocol, count: Int) throws(HexDecodingError) -> [UInt8] {
        let bytes = try decode(text)
        guard bytes.count == count else { throw .wrongLength(bytes: bytes.count, expected: count) }
        return bytes
    }

    /// Lowercase hex of the bytes, two digits each, no separators.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
