// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a key file is not usable at all. Each case says what was wrong in words an operator can act on.
package enum KeyFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The archive breaks a limit or the layout rules (size, entries, bomb ratio, not a zip).
    case archive(String)
    /// export.bin does not start with the 16-byte header.
    case badHeader
    /// The protobuf of export.bin or export.sig cannot be decoded.
    case malformed(String)
    /// More keys than any file may hold: the count at which reading stopped (the limit + 1).
    case tooManyKeys(Int)

    package var description: String {
        switch self {
        case .archive(let reason): return "archive: \(reason)"
        case .badHeader: return "export.bin does not start with the header \"EK Export v1    \""
        case .malformed(let reason): return "malformed: \(reason)"
        case .tooManyKeys(let count):
            return "key \(count) is over the limit of \(KeyFileLimits.maximumKeys) keys (keys and revised keys, counted as read)"
        }
    }
}

/// The limits every file is held to, before anything in it is trusted.
package enum KeyFileLimits {
    /// Apple's limit for one archive.
    package static let maximumArchiveBytes = 16 * 1024 * 1024
    /// Apple's limit for keys in one file.
    package static let maximumKeys = 750_000
    /// An uncompressed entry larger than this is refused. 750,000 keys with every field set are
    /// 25.5 MB (34 bytes each: key 18, start 5, period 3, risk, type and onset 2 each, framing 2),
    /// so every real file fits; export.bin is held inflated while its signature is checked, and
    /// 64 MiB put the worst file the limits let through at 133 MB of peak RSS, past the daemon's
    /// 100 MB budget (docs/key-files.md, "Memory").
    package static let maximumEntryBytes = 32 * 1024 * 1024
    /// An entry that inflates more than this many times its compressed size is refused: key data is
    /// random and barely compresses, so a high ratio means a zip bomb.
    package static let maximumCompressionRatio: UInt64 = 20
    /// export.sig inflated: a signature is about 100 bytes, and there are as many as signature infos.
    package static let maximumSignatureFileBytes = 64 * 1024
    /// Signature infos in export.bin (real files list one or two).
    package static let maximumSignatureInfos = 100
    /// export.bin's region and each string of a signature info.
    package static let maximumHeaderStringBytes = 1024
    /// The longest key, revised key or signature info message. A real key is about 30 bytes and a
    /// signature info a few hundred; detection streams export.bin and holds one message at a time.
    package static let maximumMessageBytes = 64 * 1024
    /// Dropped keys whose reason is kept; all are counted (`KeyExport.droppedCount`).
    package static let maximumDroppedReasons = 1000
}
