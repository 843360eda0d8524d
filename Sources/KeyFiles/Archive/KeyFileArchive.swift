// SPDX-License-Identifier: GPL-3.0-or-later

/// The two entries of a key file archive, read under limits before anything in them is trusted.
///
/// Policy: exactly one `export.bin` and one `export.sig` at the root of the archive; other root
/// entries (the Dutch server adds `content.sig`) are ignored and listed; an archive whose export
/// files sit only in a sub-folder (as some test archives made on a desktop do) is refused; a
/// second `export.bin` or `export.sig` at the root is refused, since which one is meant cannot be known.
public struct KeyFileArchive: Sendable {
    public var exportBinary: [UInt8]
    public var exportSignature: [UInt8]
    /// Root entries other than the two, ignored.
    public var ignoredEntries: [String]

    public static let binaryName = "export.bin"
    public static let signatureName = "export.sig"

    public init(exportBinary: [UInt8], exportSignature: [UInt8], ignoredEntries: [String] = []) {
        self.exportBinary = exportBinary
        self.exportSignature = exportSignature
        self.ignoredEntries = ignoredEntries
    }

    /// Reads an archive from its bytes.
    public init(zip bytes: [UInt8]) throws(KeyFileError) {
        guard bytes.count <= KeyFileLimits.maximumArchiveBytes else {
            throw .archive("\(bytes.count) bytes, over the \(KeyFileLimits.maximumArchiveBytes)-byte limit")
        }
        let directory = try ZipDirectory(bytes)
        var binary: ZipDirectory.Entry?
        var signature: ZipDirectory.Entry?
        var ignored = [String]()
        var nested = [String]()
        for entry in directory.entries {
            let path = entry.path
            if path.contains("/") {
                if path.hasSuffix("/" + Self.binaryName) || path.hasSuffix("/" + Self.signatureName) { nested.append(path) }
                continue
            }
            guard entry.isFile else {
                ignored.append(path)
                continue
            }
            switch path {
            case Self.binaryName:
                guard binary == nil else { throw .archive("two \(Self.binaryName) entries") }
                binary = entry
            case Self.signatureName:
                guard signature == nil else { throw .archive("two \(Self.signatureName) entries") }
                signature = entry
            default:
                ignored.append(path)
            }
        }
        guard let binary, let signature else {
            let missing = [binary == nil ? Self.binaryName : nil, signature == nil ? Self.signatureName : nil].compactMap { $0 }
            let detail = nested.isEmpty ? "" : "; found only in a sub-folder: \(nested.joined(separator: ", "))"
            throw .archive("no \(missing.joined(separator: " or ")) at the root\(detail)")
        }
        exportBinary = try Self.extract(binary, from: directory)
        exportSignature = try Self.extract(signature, from: directory)
        ignoredEntries = ignored
    }

    /// Inflates one entry, counting the bytes as they come: the sizes in the central directory are
    /// the archive's own claims and are not trusted.
    private static func extract(_ entry: ZipDirectory.Entry, from directory: ZipDirectory) throws(KeyFileError) -> [UInt8] {
        let compressed = UInt64(max(entry.compressedSize, 1))
        return try directory.contents(of: entry) { count in
            if count > KeyFileLimits.maximumEntryBytes {
                return .archive("\(entry.path) inflates past the \(KeyFileLimits.maximumEntryBytes)-byte limit")
            }
            if count > 1 << 20, UInt64(count) / compressed > KeyFileLimits.maximumCompressionRatio {
                return .archive("\(entry.path) inflates more than \(KeyFileLimits.maximumCompressionRatio) times its size: a zip bomb")
            }
            return nil
        }
    }
}
