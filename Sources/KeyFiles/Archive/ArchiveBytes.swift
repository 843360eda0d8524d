// SPDX-License-Identifier: GPL-3.0-or-later

import Storage

/// Where an archive's bytes are: in memory (tools, tests, fuzzing) or in a file read a range at a
/// time (the daemon's spool, the tools' arguments), so that detection never holds an archive whole.
package final class ArchiveBytes: @unchecked Sendable {
    // @unchecked: immutable; a file is only read with pread, which needs no lock.
    private enum Backing {
        case memory([UInt8])
        case file(AppendOnlyFile)
    }

    private let backing: Backing
    /// The archive's size in bytes.
    package let count: Int

    package init(_ bytes: [UInt8]) {
        backing = .memory(bytes)
        count = bytes.count
    }

    /// Bytes in memory, refused over `limit` (the archive limit) as a file of that size would be.
    package static func checked(_ bytes: [UInt8], limit: Int = KeyFileLimits.maximumArchiveBytes) throws(KeyFileError) -> ArchiveBytes {
        guard bytes.count <= limit else { throw .archive("\(bytes.count) bytes, over the \(limit)-byte limit") }
        return ArchiveBytes(bytes)
    }

    /// The file at `path`, refused over `limit` bytes (the archive limit) before anything is read.
    package init(path: String, limit: Int = KeyFileLimits.maximumArchiveBytes) throws(KeyFileError) {
        let file: AppendOnlyFile
        let size: Int64
        do {
            file = try AppendOnlyFile(path: path, mode: .readOnly)
            size = try file.size()
        } catch {
            throw .archive("cannot be read: \(error)")
        }
        guard size <= Int64(limit) else { throw .archive("\(size) bytes, over the \(limit)-byte limit") }
        backing = .file(file)
        count = Int(size)
    }

    /// The bytes of `range`, which must lie within the archive.
    func read(_ range: Range<Int>) throws(KeyFileError) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        switch backing {
        case .memory(let bytes):
            return Array(bytes[range])
        case .file(let file):
            var bytes = [UInt8](repeating: 0, count: range.count)
            let read = try bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(KeyFileError) in try Self.read(file, into: buffer, at: range.lowerBound) }
            }.get()
            guard read == range.count else { throw .archive("the file shrank while it was read") }
            return bytes
        }
    }

    /// Reads into `buffer` from `offset`; short only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeyFileError) -> Int {
        switch backing {
        case .memory(let bytes):
            let end = min(bytes.count, offset + buffer.count)
            guard offset < end else { return 0 }
            bytes.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: end - offset)
            }
            return end - offset
        case .file(let file):
            return try Self.read(file, into: buffer, at: offset)
        }
    }

    private static func read(_ file: AppendOnlyFile, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeyFileError) -> Int {
        var done = 0
        while done < buffer.count {
            let count: Int
            do {
                count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: Int64(offset + done))
            } catch {
                throw .archive("cannot be read: \(error)")
            }
            if count == 0 { break }
            done += count
        }
        return done
    }
}
