// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import ZIPFoundation

/// A zip archive's entries as its central directory lists them, read from the bytes with every
/// offset and length checked against them, and an entry's contents inflated from exactly its own
/// bytes.
///
/// Key files are read with this, not with ZIPFoundation's `Archive` (0.9.20), for what fuzzing
/// found there: its inflate loop asks the file for more until the deflate stream ends, and at the
/// end of the file gets nothing, for ever (a stream cut short hung the reader); its in-memory
/// archive traps on a read after a seek past the end, which an archive's own offsets can ask for;
/// and an in-memory archive it refuses stays in memory. ZIPFoundation still inflates
/// (`Data.decompress`, fed here from a bounded provider) and writes archives.
///
/// Only what key files need: one disk, no ZIP64 (an archive is at most 16 MiB), stored or
/// deflated entries.
struct ZipDirectory {
    struct Entry {
        var path: String
        var method: UInt16
        var checksum: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        var localHeaderOffset: Int
        /// Made on Unix with the mode of a symbolic link (the high half of the external attributes).
        var isSymbolicLink: Bool

        /// Neither a folder nor a link.
        var isFile: Bool { !path.hasSuffix("/") && !isSymbolicLink }
    }

    let archive: ArchiveBytes
    private(set) var entries: [Entry] = []

    static let endRecordSize = 22
    static let directoryEntrySize = 46
    static let localHeaderSize = 30
    /// The end record with the longest comment: where the search for it starts.
    static let longestEndRecord = endRecordSize + 0xFFFF

    init(_ bytes: [UInt8]) throws(KeyFileError) {
        try self.init(archive: ArchiveBytes(bytes))
    }

    /// Reads the central directory: the end record from the archive's tail, then the directory
    /// itself; nothing else is read until an entry is asked for.
    init(archive: ArchiveBytes) throws(KeyFileError) {
        self.archive = archive
        let tailStart = max(0, archive.count - Self.longestEndRecord)
        let tail = try archive.read(tailStart..<archive.count)
        guard let tailEnd = Self.endRecordOffset(tail) else { throw .archive("not a zip archive (no end of central directory record)") }
        let end = tailStart + tailEnd
        func tail16(_ offset: Int) -> UInt16 { UInt16(tail[offset - tailStart]) | UInt16(tail[offset - tailStart + 1]) << 8 }
        func tail32(_ offset: Int) -> UInt32 { UInt32(tail16(offset)) | UInt32(tail16(offset + 2)) << 16 }
        let count = Int(tail16(end + 10))
        let size = Int(tail32(end + 12))
        let start = Int(tail32(end + 16))
        guard tail16(end + 4) == 0, tail16(end + 6) == 0, Int(tail16(end + 8)) == count else { throw .archive("an archive split over disks") }
        guard count != 0xFFFF, size != 0xFFFF_FFFF, start != 0xFFFF_FFFF else { throw .archive("a ZIP64 archive (a key file is at most 16 MiB)") }
        guard start + size <= end else { throw .archive("its central directory (\(size) bytes at \(start)) runs past the end record at \(end)") }
        let bytes = try archive.read(start..<(start + size))
        func uint16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
        func uint32(_ offset: Int) -> UInt32 { UInt32(uint16(offset)) | UInt32(uint16(offset + 2)) << 16 }
        var position = 0
        for index in 0..<count {
            guard position + Self.directoryEntrySize <= size, uint32(position) == 0x0201_4B50 else {
                throw .archive("central directory entry \(index) at \(start + position) is damaged")
            }
            let nameLength = Int(uint16(position + 28))
            let next = position + Self.directoryEntrySize + nameLength + Int(uint16(position + 30)) + Int(uint16(position + 32))
            guard next <= size else { throw .archive("central directory entry \(index) runs past the directory") }
            let nameStart = position + Self.directoryEntrySize
            let madeOnUnix = bytes[position + 5] == 3
            let mode = uint32(position + 38) >> 16
            entries.append(
                Entry(
                    path: String(decoding: bytes[nameStart..<(nameStart + nameLength)], as: UTF8.self), method: uint16(position + 10),
                    checksum: uint32(position + 16), compressedSize: Int(uint32(position + 20)), uncompressedSize: Int(uint32(position + 24)),
                    localHeaderOffset: Int(uint32(position + 42)), isSymbolicLink: madeOnUnix && mode & 0o170000 == 0o120000))
            position = next
        }
    }

    /// The offset of the end record ZIPFoundation would find: the signature nearest the end with
    /// 22 bytes after it; nil unless the comment it declares is within the bytes too.
    static func endRecordOffset(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= endRecordSize else { return nil }
        for offset in stride(from: bytes.count - endRecordSize, through: 0, by: -1)
        where bytes[offset] == 0x50 && bytes[offset + 1] == 0x4B && bytes[offset + 2] == 0x05 && bytes[offset + 3] == 0x06 {
            let commentLength = Int(bytes[offset + 20]) | Int(bytes[offset + 21]) << 8
            return offset + endRecordSize + commentLength <= bytes.count ? offset : nil
        }
        return nil
    }

    /// The contents of `entry`, inflated from its own bytes only, checked against its CRC-32;
    /// `check` sees the output grow and may refuse it (the size and ratio limits). `expected` (the
    /// size the archive claims, within the limit) is reserved, not trusted: pages are touched only
    /// as the output grows, and the output never doubles its buffer when the claim is true.
    func contents(of entry: Entry, expected: Int = 0, check: @escaping (Int) -> KeyFileError?) throws(KeyFileError) -> [UInt8] {
        try stream(of: entry, check: check).readAll(reserving: expected)
    }

    /// The contents of `entry` as a stream (`EntryStream`): read, inflated and checked a chunk at a
    /// time.
    func stream(of entry: Entry, check: @escaping (Int) -> KeyFileError?) throws(KeyFileError) -> EntryStream {
        let header = entry.localHeaderOffset
        guard header + Self.localHeaderSize <= archive.count else { throw .archive("\(entry.path) has no local header at \(header)") }
        let local = try archive.read(header..<(header + Self.localHeaderSize))
        func uint16(_ offset: Int) -> UInt16 { UInt16(local[offset]) | UInt16(local[offset + 1]) << 8 }
        guard uint16(0) == 0x4B50, uint16(2) == 0x0403 else { throw .archive("\(entry.path) has no local header at \(header)") }
        let dataStart = header + Self.localHeaderSize + Int(uint16(26)) + Int(uint16(28))
        let dataEnd = dataStart + entry.compressedSize
        guard dataEnd <= archive.count else { throw .archive("\(entry.path): its \(entry.compressedSize) bytes at \(dataStart) run past the end") }
        switch entry.method {
        case CompressionMethod.none.rawValue, CompressionMethod.deflate.rawValue:
            return try EntryStream(
                archive: archive, path: entry.path, data: dataStart..<dataEnd, deflated: entry.method == CompressionMethod.deflate.rawValue,
                crc: entry.checksum, check: check)
        default:
            throw .archive("\(entry.path) uses compression method \(entry.method), not stored (0) or deflate (8)")
        }
    }
}
