// SPDX-License-Identifier: GPL-3.0-or-later

/// The two entries of a key file archive, read under limits before anything in them is trusted.
///
/// Policy, Google's (`ProvideDiagnosisKeys.unzip` in exposure-notifications-internals): the archive
/// holds `export.bin` and `export.sig` at its root and nothing else. Any other entry is refused by
/// name, a folder, a file in a sub-folder (test archives zipped on a desktop) or an extra file at
/// the root (the Dutch server's `content.sig`), and so is a second `export.bin` or `export.sig`,
/// since which one is meant cannot be known. Every entry is judged before any is inflated.
package struct KeyFileArchive: Sendable {
    package var exportBinary: [UInt8]
    package var exportSignature: [UInt8]

    package static let binaryName = "export.bin"
    package static let signatureName = "export.sig"

    package init(exportBinary: [UInt8], exportSignature: [UInt8]) {
        self.exportBinary = exportBinary
        self.exportSignature = exportSignature
    }

    /// Reads an archive from its bytes.
    package init(zip bytes: [UInt8]) throws(KeyFileError) {
        guard bytes.count <= KeyFileLimits.maximumArchiveBytes else {
            throw .archive("\(bytes.count) bytes, over the \(KeyFileLimits.maximumArchiveBytes)-byte limit")
        }
        let directory = try ZipDirectory(bytes)
        var binary: ZipDirectory.Entry?
        var signature: ZipDirectory.Entry?
        // In the archive's order, as Google's unzip: the first entry that breaks the rule is named.
        for entry in directory.entries {
            switch entry.path {
            case Self.binaryName where entry.isFile:
                guard binary == nil else { throw .archive("two \(Self.binaryName) entries") }
                binary = entry
            case Self.signatureName where entry.isFile:
                guard signature == nil else { throw .archive("two \(Self.signatureName) entries") }
                signature = entry
            default:
                throw .archive(Self.refusal(of: entry, in: directory))
            }
        }
        guard let binary, let signature else {
            let missing = [binary == nil ? Self.binaryName : nil, signature == nil ? Self.signatureName : nil].compactMap { $0 }
            throw .archive("no \(missing.joined(separator: " or ")) at the root")
        }
        exportBinary = try Self.extract(binary, from: directory, limit: KeyFileLimits.maximumEntryBytes)
        exportSignature = try Self.extract(signature, from: directory, limit: KeyFileLimits.maximumSignatureFileBytes)
    }

    /// Why `entry` is refused, and where the export files are if they sit only in a sub-folder,
    /// so that an operator sees at once that the archive was zipped with its folder.
    private static func refusal(of entry: ZipDirectory.Entry, in directory: ZipDirectory) -> String {
        let what = entry.isSymbolicLink ? "a symbolic link, not export.bin or export.sig" : "neither export.bin nor export.sig"
        var reason = "entry '\(entry.path)' is \(what) (GMS refuses such archives)"
        let nested = directory.entries.map(\.path).filter { $0.hasSuffix("/" + binaryName) || $0.hasSuffix("/" + signatureName) }
        if !nested.isEmpty { reason += "; the export files are in a sub-folder: \(nested.joined(separator: ", "))" }
        return reason
    }

    /// Inflates one entry, counting the bytes as they come: the sizes in the central directory are
    /// the archive's own claims and are not trusted. export.sig has a limit of its own (a few
    /// signatures are a few hundred bytes; decoded whole, millions of empty ones cost gigabytes).
    private static func extract(_ entry: ZipDirectory.Entry, from directory: ZipDirectory, limit: Int) throws(KeyFileError) -> [UInt8] {
        let compressed = UInt64(max(entry.compressedSize, 1))
        return try directory.contents(of: entry, expected: min(entry.uncompressedSize, limit)) { count in
            if count > limit {
                return .archive("\(entry.path) inflates past the \(limit)-byte limit")
            }
            if count > 1 << 20, UInt64(count) / compressed > KeyFileLimits.maximumCompressionRatio {
                return .archive("\(entry.path) inflates more than \(KeyFileLimits.maximumCompressionRatio) times its size: a zip bomb")
            }
            return nil
        }
    }
}
