// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCrypto
package import Storage

/// Why the key history could not be read, kept or extended.
package enum KeyHistoryError: Error, Sendable, CustomStringConvertible {
    /// The file could not be read or written.
    case storage(FileSystemError)
    /// The file is not a key history of any version this program knows: its header is damaged or it
    /// is some other file. Nothing is written over it.
    case unreadable(path: String, reason: String)
    /// The file was written by a newer gaend.
    case unsupportedVersion(path: String, version: UInt16)
    /// No random bytes could be had for a new key.
    case random(CryptoError)
    /// The wall clock reads a time no interval number can represent (before 1970).
    case clockOutOfRange(milliseconds: Int64)
    /// The wall clock cannot be trusted now (the reason): no key is made or released on it.
    case clockUntrusted(String)

    package var description: String {
        switch self {
        case .storage(let error):
            return "key history: \(error)"
        case .unreadable(let path, let reason):
            return "key history \(path) is unreadable: \(reason); it was left as it is"
        case .unsupportedVersion(let path, let version):
            return "key history \(path) has format version \(version), newer than this gaend reads (1)"
        case .random(let error):
            return "making a new key: \(error)"
        case .clockUntrusted(let reason):
            return "no key is made or released while the clock is not trusted: \(reason)"
        case .clockOutOfRange(let milliseconds):
            return "the wall clock reads \(milliseconds) ms since 1970, outside what interval numbers can represent"
        }
    }
}
