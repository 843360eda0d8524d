// SPDX-License-Identifier: GPL-3.0-or-later

/// The specification's rules for names and paths ("Valid Object Paths", "Valid Names"), checked
/// in Swift before anything reaches libdbus, which aborts the process on an invalid one.
package enum DBusNames {
    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    /// `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`.
    package static func isValidObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        return bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0.allSatisfy(isNameCharacter)
        }
    }

    /// Two or more dot-separated elements of `[A-Za-z0-9_]` not starting with a digit; 255 bytes at most.
    package static func isValidInterface(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count <= 255 else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return elements.count >= 2
            && elements.allSatisfy { !$0.isEmpty && !($0.first! >= 0x30 && $0.first! <= 0x39) && $0.allSatisfy(isNameCharacter) }
    }

    /// Error names follow the interface rules.
    package static func isValidErrorName(_ name: String) -> Bool { isValidInterface(name) }

    /// `[A-Za-z_][A-Za-z0-9_]*`, 255 bytes at most.
    package static func isValidMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 255, !(first >= 0x30 && first <= 0x39) else { return false }
        return bytes.allSatisfy(isNameCharacter)
    }

    /// A unique name (`:1.42`) or a well-known name (interface rules, `-` allowed).
    package static func isValidBusName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count <= 255, !bytes.isEmpty else { return false }
        let unique = bytes.first == UInt8(ascii: ":")
        let elements = (unique ? bytes.dropFirst() : bytes[...]).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first else { return false }
            if !unique, first >= 0x30 && first <= 0x39 { return false }
            return element.allSatisfy { isNameCharacter($0) || $0 == UInt8(ascii: "-") }
        }
    }

    /// Whether `path` is `root` or below it.
    package static func path(_ path: String, isWithin root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }
}
