// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Storage
import ZIPFoundation

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
        guard Self.hasReadableEndOfCentralDirectory(bytes) else { throw .archive("not a zip archive (no end of central directory record)") }
        // Through a file, not ZIPFoundation's in-memory archive: its memory file traps on a read
        // after a seek past the end, which an archive's own offsets can ask for, where a read of a
        // file is short and refused (Archive+MemoryFile.swift in 0.9.20, found by fuzzing).
        let archive: Archive
        do {
            let file = try AnonymousMemoryFile(name: "gaend-key-file", bytes: bytes)
            // Open while ours is: the file ends with its last descriptor.
            archive = try withExtendedLifetime(file) { try Archive(url: URL(fileURLWithPath: file.path), accessMode: .read) }
        } catch let error as FileSystemError {
            throw .archive("cannot be held for reading (\(error))")
        } catch {
            throw .archive("not a zip archive (\(error))")
        }
        var binary: Entry?
        var signature: Entry?
        var ignored = [String]()
        var nested = [String]()
        for entry in archive {
            let path = entry.path
            if path.contains("/") {
                if path.hasSuffix("/" + Self.binaryName) || path.hasSuffix("/" + Self.signatureName) { nested.append(path) }
                continue
            }
            guard entry.type == .file else {
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
        exportBinary = try Self.extract(binary, from: archive)
        exportSignature = try Self.extract(signature, from: archive)
        ignoredEntries = ignored
    }

    /// Inflates one entry, counting the bytes as they come: the sizes in the central directory are
    /// the archive's own claims and are not trusted.
    private static func extract(_ entry: Entry, from archive: Archive) throws(KeyFileError) -> [UInt8] {
        let compressed = max(entry.compressedSize, 1)
        var bytes = [UInt8]()
        bytes.reserveCapacity(Int(min(entry.uncompressedSize, UInt64(KeyFileLimits.maximumEntryBytes))))
        do {
            _ = try archive.extract(entry, consumer: { chunk in
                bytes.append(contentsOf: chunk)
                if bytes.count > KeyFileLimits.maximumEntryBytes { throw LimitExceeded.size }
                if bytes.count > 1 << 20, UInt64(bytes.count) / compressed > KeyFileLimits.maximumCompressionRatio {
                    throw LimitExceeded.ratio
                }
            })
        } catch LimitExceeded.size {
            throw .archive("\(entry.path) inflates past the \(KeyFileLimits.maximumEntryBytes)-byte limit")
        } catch LimitExceeded.ratio {
            throw .archive("\(entry.path) inflates more than \(KeyFileLimits.maximumCompressionRatio) times its size: a zip bomb")
        } catch {
            throw .archive("\(entry.path) cannot be extracted (\(error))")
        }
        return bytes
    }

    /// Whether ZIPFoundation's scan will find an end-of-central-directory record it can read: the
    /// signature nearest the end with 22 bytes after it, and the comment it declares within the
    /// bytes. Its scan reads the file a byte at a time through stdio, from the end to the start for
    /// a body that is no archive (an error page, a cut transfer); this one costs a pass over the
    /// bytes in memory and names the problem.
    static func hasReadableEndOfCentralDirectory(_ bytes: [UInt8]) -> Bool {
        let recordSize = 22
        guard bytes.count >= recordSize else { return false }
        for offset in stride(from: bytes.count - recordSize, through: 0, by: -1)
        where bytes[offset] == 0x50 && bytes[offset + 1] == 0x4B && bytes[offset + 2] == 0x05 && bytes[offset + 3] == 0x06 {
            let commentLength = Int(bytes[offset + 20]) | Int(bytes[offset + 21]) << 8
            return offset + recordSize + commentLength <= bytes.count
        }
        return false
    }

    private enum LimitExceeded: Error {
        case size, ratio
    }
}
