// SPDX-License-Identifier: GPL-3.0-or-later

/// The two entries of a key file archive, read under limits before anything in them is trusted.
///
/// Policy, Google's (`ProvideDiagnosisKeys.unzip` in exposure-notifications-internals): the archive
/// holds `export.bin` and `export.sig` at its root and nothing else. Any other entry is refused by
/// name, a folder, a file in a sub-folder (test archives zipped on a desktop) or an unknown file at
/// the root, and so is a second `export.bin` or `export.sig`, since which one is meant cannot be
/// known. Every entry is judged before any is inflated.
///
/// One exception, because gaend is the app and the framework in one: a known app signature at the
/// root (`knownAppSignatures`) is left uninflated and named in `ignoredEntries`. The Dutch server
/// adds `content.sig`, a detached CMS signature over export.bin under the Dutch PKI
/// (nl-covid19-notification-app-backend `EksBuilderV1.cs`), which the Dutch app checks and strips,
/// re-zipping export.bin and export.sig alone for the framework (nl-covid19-notification-app-android
/// `ExposureNotificationsRepository.validateAndWrite`). gaend does not check it (it holds no Dutch
/// root); export.sig, under the keys the owner trusts, still decides the verdict.
package struct KeyFileArchive: Sendable {
    package var exportBinary: [UInt8]
    package var exportSignature: [UInt8]
    /// Root entries passed over, in the archive's order: known app signatures only.
    package var ignoredEntries: [String]

    package static let binaryName = "export.bin"
    package static let signatureName = "export.sig"
    /// Root entries that apps' servers add beside the export pair and that their apps strip.
    package static let knownAppSignatures: Set<String> = ["content.sig"]

    package init(exportBinary: [UInt8], exportSignature: [UInt8], ignoredEntries: [String] = []) {
        self.exportBinary = exportBinary
        self.exportSignature = exportSignature
        self.ignoredEntries = ignoredEntries
    }

    /// Reads an archive from its bytes.
    package init(zip bytes: [UInt8]) throws(KeyFileError) {
        let entries = try KeyFileEntries(archive: ArchiveBytes.checked(bytes))
        ignoredEntries = entries.ignoredEntries
        exportBinary = try entries.exportBinary()
        exportSignature = try entries.exportSignature()
    }

    /// Why `entry` is refused, and where the export files are if they sit only in a sub-folder,
    /// so that an operator sees at once that the archive was zipped with its folder.
    static func refusal(of entry: ZipDirectory.Entry, in directory: ZipDirectory) -> String {
        let what = entry.isSymbolicLink ? "a symbolic link, not export.bin or export.sig" : "neither export.bin nor export.sig"
        var reason = "entry '\(entry.path)' is \(what) (GMS refuses such archives)"
        let nested = directory.entries.map(\.path).filter { $0.hasSuffix("/" + binaryName) || $0.hasSuffix("/" + signatureName) }
        if !nested.isEmpty { reason += "; the export files are in a sub-folder: \(nested.joined(separator: ", "))" }
        return reason
    }
}

/// A key file archive's entries judged by Google's rules (`KeyFileArchive`), nothing inflated yet:
/// export.bin can then be read whole or as a stream, and export.sig whole.
package struct KeyFileEntries: Sendable {
    private let directory: ZipDirectory
    private let binary: ZipDirectory.Entry
    private let signature: ZipDirectory.Entry
    /// Root entries passed over, in the archive's order: known app signatures only.
    package let ignoredEntries: [String]

    package init(archive: ArchiveBytes) throws(KeyFileError) {
        let directory = try ZipDirectory(archive: archive)
        var binary: ZipDirectory.Entry?
        var signature: ZipDirectory.Entry?
        var ignored = [String]()
        // In the archive's order, as Google's unzip: the first entry that breaks the rule is named.
        for entry in directory.entries {
            switch entry.path {
            case KeyFileArchive.binaryName where entry.isFile:
                guard binary == nil else { throw .archive("two \(KeyFileArchive.binaryName) entries") }
                binary = entry
            case KeyFileArchive.signatureName where entry.isFile:
                guard signature == nil else { throw .archive("two \(KeyFileArchive.signatureName) entries") }
                signature = entry
            case let path where KeyFileArchive.knownAppSignatures.contains(path) && entry.isFile:
                guard !ignored.contains(path) else { throw .archive("two \(path) entries") }
                ignored.append(path)
            default:
                throw .archive(KeyFileArchive.refusal(of: entry, in: directory))
            }
        }
        guard let binary, let signature else {
            let missing = [binary == nil ? KeyFileArchive.binaryName : nil, signature == nil ? KeyFileArchive.signatureName : nil].compactMap { $0 }
            throw .archive("no \(missing.joined(separator: " or ")) at the root")
        }
        self.directory = directory
        self.binary = binary
        self.signature = signature
        ignoredEntries = ignored
    }

    /// export.bin whole (tools, which show a file whole).
    package func exportBinary() throws(KeyFileError) -> [UInt8] {
        try directory.contents(
            of: binary, expected: min(binary.uncompressedSize, KeyFileLimits.maximumEntryBytes), check: Self.limits(of: binary, KeyFileLimits.maximumEntryBytes)
        )
    }

    /// export.bin as a stream, under the same limits.
    func exportBinaryStream() throws(KeyFileError) -> EntryStream {
        try directory.stream(of: binary, check: Self.limits(of: binary, KeyFileLimits.maximumEntryBytes))
    }

    /// export.sig whole (a few signatures: a few hundred bytes; it has a limit of its own).
    package func exportSignature() throws(KeyFileError) -> [UInt8] {
        try directory.contents(
            of: signature, expected: min(signature.uncompressedSize, KeyFileLimits.maximumSignatureFileBytes),
            check: Self.limits(of: signature, KeyFileLimits.maximumSignatureFileBytes))
    }

    /// The bytes of an entry are counted as they come: the sizes in the central directory are the
    /// archive's own claims and are not trusted. export.sig has a limit of its own (decoded whole,
    /// millions of empty signatures cost gigabytes).
    private static func limits(of entry: ZipDirectory.Entry, _ limit: Int) -> (Int) -> KeyFileError? {
        let compressed = UInt64(max(entry.compressedSize, 1))
        let path = entry.path
        return { count in
            if count > limit {
                return .archive("\(path) inflates past the \(limit)-byte limit")
            }
            if count > 1 << 20, UInt64(count) / compressed > KeyFileLimits.maximumCompressionRatio {
                return .archive("\(path) inflates more than \(KeyFileLimits.maximumCompressionRatio) times its size: a zip bomb")
            }
            return nil
        }
    }
}
