// SPDX-License-Identifier: GPL-3.0-or-later

/// The first key that appears twice in one JSON object, anywhere in a document JSONSerialization
/// has already accepted (which keeps one of the two, silently). An authority's configuration with
/// a key twice says two things; which one it meant cannot be known, so it is refused by name
/// (issue 40). Keys are compared decoded, so `"a"` and `"\u0061"` are the same key.
enum JSONDuplicateKeys {
    /// The duplicated key and the path of its object (`$`, `$.v2`, `$.list[2]`), or nil.
    static func first(in bytes: [UInt8]) -> (key: String, path: String)? {
        var scanner = Scanner(bytes: bytes)
        return scanner.value(path: "$")
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        /// Scans one value; a duplicate found inside it, or nil.
        mutating func value(path: String) -> (key: String, path: String)? {
            skipSpace()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var seen = Set<String>()
                while true {
                    skipSpace()
                    guard position < bytes.count else { return nil }
                    if bytes[position] == UInt8(ascii: "}") {
                        position += 1
                        return nil
                    }
                    if bytes[position] == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    let key = string()
                    if !seen.insert(key).inserted { return (key, path) }
                    skipSpace()
                    if position < bytes.count, bytes[position] == UInt8(ascii: ":") { position += 1 }
                    if let found = value(path: path + "." + key) { return found }
                }
            case UInt8(ascii: "["):
                position += 1
                var index = 0
                while true {
                    skipSpace()
                    guard position < bytes.count else { return nil }
                    if bytes[position] == UInt8(ascii: "]") {
                        position += 1
                        return nil
                    }
                    if bytes[position] == UInt8(ascii: ",") {
                        position += 1
                        index += 1
                        continue
                    }
                    if let found = value(path: path + "[\(index)]") { return found }
                }
            case UInt8(ascii: "\""):
                _ = string()
                return nil
            default:
                // A number, true, false or null: up to the next delimiter.
                while position < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")].contains(bytes[position]) {
                    position += 1
                }
                return nil
            }
        }

        /// A string at `position` (its opening quote), decoded.
        mutating func string() -> String {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                // Not a string (JSON that was not valid): step over it, so every loop moves on.
                position += 1
                return ""
            }
            position += 1
            var scalars = String.UnicodeScalarView()
            var utf8 = [UInt8]()
            func flush() {
                scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                utf8.removeAll()
            }
            var pendingHigh: UInt32?
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "\"") { break }
                guard byte == UInt8(ascii: "\\"), position < bytes.count else {
                    utf8.append(byte)
                    continue
                }
                let escape = bytes[position]
                position += 1
                flush()
                switch escape {
                case UInt8(ascii: "u"):
                    guard position + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[position..<(position + 4)], as: UTF8.self), radix: 16)
                    else { continue }
                    position += 4
                    if (0xD800...0xDBFF).contains(code) {
                        pendingHigh = code
                        continue
                    }
                    if let high = pendingHigh, (0xDC00...0xDFFF).contains(code) {
                        pendingHigh = nil
                        if let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)) { scalars.append(scalar) }
                        continue
                    }
                    if let scalar = Unicode.Scalar(code) { scalars.append(scalar) }
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                default: scalars.append(Unicode.Scalar(escape))
                }
            }
            flush()
            return String(scalars)
        }
    }
}
