// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a key file is not usable at all. Each case says what was wrong in words an operator can act on.
public enum KeyFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The archive breaks a limit or the layout rules (size, entries, bomb ratio, not a zip).
    case archive(String)
    /// export.bin does not start with the 16-byte header.
    case badHeader
    /// The protobuf of export.bin or export.sig cannot be decoded.
    case malformed(String)
    /// More keys than any file may hold.
    case tooManyKeys(Int)

    public var description: String {
        switch self {
        case .archive(let reason): return "archive: \(reason)"
        case .badHeader: return "export.bin does not start with the header \"EK Export v1    \""
        case .malformed(let reason): return "malformed: \(reason)"
        case .tooManyKeys(let count): return "\(count) keys, over the limit of \(KeyFileLimits.maximumKeys)"
        }
    }
}

/// The limits every file is held to, before anything in it is trusted.
public enum KeyFileLimits {
    /// Apple's limit for one archive.
    public static let maximumArchiveBytes = 16 * 1024 * 1024
    /// Apple's limit for keys in one file.
    public static let maximumKeys = 750_000
    /// An uncompressed entry larger than this is refused (750,000 keys are about 30 MB).
    public static let maximumEntryBytes = 64 * 1024 * 1024
    /// An entry that inflates more than this many times its compressed size is refused: key data is
    /// random and barely compresses, so a high ratio means a zip bomb.
    public static let maximumCompressionRatio: UInt64 = 20
}
