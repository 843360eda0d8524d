// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL

/// A libcrypto call that failed, with what libcrypto's error queue said about it.
package struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// The operation that failed, in the words of this module ("creating the AES-128-ECB context").
    package var operation: String
    /// libcrypto's own reason, or an explanation when the queue was empty.
    package var reason: String

    package init(operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    package var description: String { "\(operation) failed: \(reason)" }

    /// Drains libcrypto's thread-local error queue into an error for `operation`.
    static func fromQueue(_ operation: String) -> CryptoError {
        var reasons = [String]()
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return CryptoError(operation: operation, reason: reasons.isEmpty ? "no reason given by libcrypto" : reasons.joined(separator: "; "))
    }
}
