// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Storage

/// Files the writer keeps beside the segments rather than lose bytes: `YYYY-MM-DD.log.damaged-<unix
/// time>` (a copy of a segment made before damage was cut off its tail) and
/// `YYYY-MM-DD.log.unreadable-<unix time>` (a segment whose header could not be read, renamed).
/// A second file of the same day and second gets `-2`, `-3`, ... after the time.
///
/// They hold contact data, so they follow the segments' rules: mode 0600 in the 0700 directory,
/// deleted with their day at the retention. And they are bounded: at most `keptPerDay` per day, the
/// oldest deleted first, so that damage that comes back at every start cannot fill the disk.
enum SetAsideFiles {
    enum Kind: String {
        case damaged
        case unreadable
    }

    /// Set-aside files kept per day, damaged and unreadable together.
    static let keptPerDay = 3
    /// A copy is read and written in chunks of this many bytes, never the whole segment at once.
    static let copyChunkSize = 1 << 20

    /// A set-aside file's name, parsed; ordered oldest first.
    struct Name: Comparable {
        var day: UTCDay
        var seconds: Int64
        var sequence: Int64
        var fileName: String

        static func < (lhs: Name, rhs: Name) -> Bool {
            (lhs.seconds, lhs.sequence, lhs.fileName) < (rhs.seconds, rhs.sequence, rhs.fileName)
        }
    }

    /// The set-aside file a name stands for, `nil` for any other name. Names of older releases
    /// (`.unreadable-<day>-<size>`) parse too, and sort as the oldest.
    static func parse(_ fileName: String) -> Name? {
        let parts = fileName.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, "." + parts[1] == SegmentFormat.fileSuffix, let day = UTCDay(parsing: parts[0]) else { return nil }
        for kind in [Kind.damaged, .unreadable] where parts[2].hasPrefix(kind.rawValue + "-") {
            let numbers = parts[2].dropFirst(kind.rawValue.count + 1).split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(numbers.count), let seconds = Int64(numbers[0]) else { return nil }
            let sequence = numbers.count == 2 ? Int64(numbers[1]) : 1
            guard let sequence else { return nil }
            return Name(day: day, seconds: seconds, sequence: sequence, fileName: fileName)
        }
        return nil
    }

    /// The set-aside files of a directory, oldest first.
    static func files(in directory: DataDirectory) throws(FileSystemError) -> [Name] {
        try directory.entries().compactMap(parse).sorted()
    }

    /// Deletes the oldest set-aside files of `day` so that one more leaves at most `keptPerDay`.
    ///
    /// - Returns: the names deleted.
    static func makeRoom(for day: UTCDay, in directory: DataDirectory) throws(FileSystemError) -> [String] {
        let ofDay = try files(in: directory).filter { $0.day == day }
        let deleted = ofDay.prefix(max(0, ofDay.count - (keptPerDay - 1))).map(\.fileName)
        for name in deleted { try AtomicFile.remove(directory.path(of: name)) }
        return deleted
    }

    /// Deletes the set-aside files of days `retentionDays` or more before `today`, and any copy a
    /// crash left half-made (if it can: a copy that is made removes it first anyway).
    ///
    /// - Returns: the names deleted.
    static func deleteExpired(in directory: DataDirectory, today: UTCDay, retentionDays: Int64) throws(FileSystemError) -> [String] {
        let names = try directory.entries()
        let expired = names.compactMap(parse).filter { $0.day.distance(to: today) >= retentionDays }.map(\.fileName)
        for name in expired { try AtomicFile.remove(directory.path(of: name)) }
        let leftovers = names.filter { $0.hasPrefix(".") && $0.hasSuffix(temporarySuffix) }.filter { name in
            (try? AtomicFile.remove(directory.path(of: name))) != nil
        }
        return expired + leftovers
    }

    /// A name for a new set-aside file of `day`, made at `now`, that no file has.
    static func newName(for day: UTCDay, kind: Kind, now: UnixTime, in directory: DataDirectory) throws(FileSystemError) -> String {
        let base = SegmentFormat.fileName(for: day) + ".\(kind.rawValue)-\(now.seconds)"
        var name = base
        var sequence = 1
        while try AtomicFile.mode(of: directory.path(of: name)) != nil {
            sequence += 1
            name = base + "-\(sequence)"
        }
        return name
    }

    /// Renames the segment of `day` aside; returns the new path.
    static func move(segment path: String, day: UTCDay, now: UnixTime, in directory: DataDirectory) throws(FileSystemError) -> String {
        let aside = directory.path(of: try newName(for: day, kind: .unreadable, now: now, in: directory))
        try AtomicFile.move(path, to: aside)
        return aside
    }

    /// Copies the segment of `day` at `path`, byte for byte, to a new damaged-copy file, streaming it
    /// in `copyChunkSize` chunks; a chunk of zeros is left a hole in the copy. The copy is written to a temporary name, synced, and renamed into
    /// place with its directory synced, so a copy that exists is whole.
    ///
    /// - Parameter size: the segment's size when it was scanned; a copy of any other size is an error.
    /// - Returns: the copy's path.
    static func copy(segment path: String, size: Int64, day: UTCDay, now: UnixTime, in directory: DataDirectory) throws(FileSystemError) -> String {
        let temporary = directory.path(of: "." + SegmentFormat.fileName(for: day) + temporarySuffix)
        // A half-made copy of a crashed start is removed (a directory there makes this fail).
        try AtomicFile.remove(temporary)
        do throws(FileSystemError) {
            let source = try AppendOnlyFile(path: path, mode: .readOnly)
            let target = try AppendOnlyFile(path: temporary, mode: .append)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: copyChunkSize, alignment: 16)
            defer { buffer.deallocate() }
            var copied = Int64(0)
            while true {
                let count = try source.read(into: buffer, at: copied)
                if count == 0 { break }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                if chunk.allSatisfy({ $0 == 0 }) {
                    // Zeros become a hole (the file extended, nothing written), as `cp --sparse`
                    // does: a sparse 300 MB tail was copied as 300 MB of real disk (issue 40).
                    try target.truncate(to: copied + Int64(count))
                } else {
                    try target.append(chunk)
                }
                copied += Int64(count)
            }
            guard copied == size else {
                throw FileSystemError(operation: "copying aside", path: path, errno: nil, detail: "copied \(copied) bytes of \(size)")
            }
            try target.sync()
            let aside = directory.path(of: try newName(for: day, kind: .damaged, now: now, in: directory))
            try AtomicFile.move(temporary, to: aside)
            return aside
        } catch {
            try? AtomicFile.remove(temporary)
            throw error
        }
    }

    /// The suffix of a copy being made: `.YYYY-MM-DD.log.copying`.
    static let temporarySuffix = ".copying"
}
