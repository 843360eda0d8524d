// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Unpadded URL-safe base64 (RFC 4648 §5), as JWTs carry their parts and ENVS stores code HMACs.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of `text`, or nil if it holds anything but the URL-safe alphabet.
    static func decode(_ text: Substring) -> [UInt8]? {
        guard text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else { return nil }
        return PublishValidator.decodeBase64(String(text))
    }
}
