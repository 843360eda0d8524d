// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import SystemCalls

/// Whole-file reads and crash-safe whole-file replacement.
///
/// A replacement is written to a temporary file in the same directory, synced, renamed over the
/// target and the directory synced, so after a power cut the path holds either the old bytes or the
/// new ones, never a mixture and never nothing.
package enum AtomicFile {
    /// Replaces the file at `path` with `bytes`, mode 0600 unless told otherwise.
    package static func write(_ bytes: [UInt8], to path: String, mode: UInt32 = DataDirectory.fileMode) throws(FileSystemError) {
        let temporary = try writeTemporary(bytes, beside: path, mode: mode)
        do {
            try Syscall.rename(temporary, path)
        } catch {
            try? Syscall.unlink(temporary)
            throw error
        }
        try syncDirectory(parentDirectory(of: path))
    }

    /// Creates the file at `path` with `bytes` (mode 0600 unless told otherwise) if there is none,
    /// whole or not at all; `false` when the path already exists, which is left as it is. For a
    /// file made once that two processes starting together may both try to make: the one that
    /// loses reads the winner's.
    package static func create(_ bytes: [UInt8], at path: String, mode: UInt32 = DataDirectory.fileMode) throws(FileSystemError) -> Bool {
        let temporary = try writeTemporary(bytes, beside: path, mode: mode)
        // link(2), unlike rename(2), never replaces: the new name appears complete or not at all.
        defer { try? Syscall.unlink(temporary) }
        do {
            try Syscall.link(temporary, path)
        } catch  where error.isExisting {
            return false
        }
        try syncDirectory(parentDirectory(of: path))
        return true
    }

    /// `bytes` written and synced to a new temporary file in `path`'s directory; its path.
    private static func writeTemporary(_ bytes: [UInt8], beside path: String, mode: UInt32) throws(FileSystemError) -> String {
        let temporary = parentDirectory(of: path) + "/." + fileName(of: path) + ".tmp-\(getpid())"
        // O_EXCL: a leftover temporary file of a crashed writer is removed and made anew, never
        // appended to or followed through a symlink.
        if try Syscall.status(temporary) != nil { try Syscall.unlink(temporary) }
        let fd = try Syscall.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode_t(mode), doing: "creating")
        defer { Syscall.close(fd) }
        do {
            try bytes.withUnsafeBytes { raw in
                Result { () throws(FileSystemError) in try Syscall.writeAll(fd, raw, path: temporary) }
            }.get()
            try Syscall.fsync(fd, path: temporary)
        } catch {
            try? Syscall.unlink(temporary)
            throw error
        }
        return temporary
    }

    /// The bytes of the file at `path`, or `nil` if there is no such file. Refuses files larger than
    /// `limit`, so that a stray huge file cannot exhaust memory.
    package static func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8]? {
        guard let fd = try openForReading(path) else { return nil }
        defer { Syscall.close(fd) }
        return try Syscall.readAll(fd, limit: limit, path: path)
    }

    /// The file at `path` opened for reading, not through a final symlink; `nil` when there is none.
    /// Something other than a regular file there (a FIFO, which would block the read forever; a
    /// device) is set aside, as a damaged file is, as `<path>.not-a-file-<unix seconds>`, and read
    /// as no file, so that the owner's state starts anew rather than hang (issue 53; OpenSSH's
    /// `auth_openfile` refuses the same).
    private static func openForReading(_ path: String) throws(FileSystemError) -> Int32? {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, doing: "opening")
        } catch  where error.isNotFound {
            return nil
        }
        do {
            try Syscall.requireRegularFile(fd, path: path)
        } catch {
            Syscall.close(fd)
            guard error.isNotRegularFile else { throw error }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            _ = try moveAside(path, label: "not-a-file", stamp: Int64(now.tv_sec))
            return nil
        }
        return fd
    }

    /// The last `limit` bytes of the file at `path` (all of it when smaller), or `nil` if there is
    /// no such file: for files whose newest entries are at the end, read within a bound whatever
    /// size an earlier version let them reach.
    package static func readTail(_ path: String, limit: Int) throws(FileSystemError) -> (bytes: [UInt8], cut: Bool)? {
        guard let fd = try openForReading(path) else { return nil }
        defer { Syscall.close(fd) }
        let size = try Syscall.fstatSize(fd, path: path)
        let start = max(0, size - Int64(limit))
        var bytes = [UInt8](repeating: 0, count: Int(size - start))
        let count = try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(FileSystemError) in try Syscall.pread(fd, raw, offset: start, path: path) }
        }.get()
        return (Array(bytes.prefix(count)), start > 0)
    }

    /// Copies the file at `from` to `to` (replacing it atomically), keeping a record of bytes that are
    /// about to be rewritten.
    package static func copy(_ from: String, to: String, limit: Int) throws(FileSystemError) {
        guard let bytes = try read(from, limit: limit) else {
            throw FileSystemError(operation: "copying", path: from, errno: .notFound)
        }
        try write(bytes, to: to)
    }

    /// Renames `from` to `to` in the same file system and syncs the directory.
    package static func move(_ from: String, to: String) throws(FileSystemError) {
        try Syscall.rename(from, to)
        try syncDirectory(parentDirectory(of: to))
    }

    /// Moves the file at `path` to a new name beside it, `<path>.<label>-<stamp>` (with `-2`, `-3`…
    /// when that is taken), never replacing another file: a copy set aside earlier is kept. The
    /// new path.
    package static func moveAside(_ path: String, label: String, stamp: Int64) throws(FileSystemError) -> String {
        for attempt in 1...1000 {
            let aside = "\(path).\(label)-\(stamp)" + (attempt == 1 ? "" : "-\(attempt)")
            do {
                // link(2) never replaces; the unlink then leaves the bytes under the new name only.
                try Syscall.link(path, aside)
            } catch  where error.isExisting {
                continue
            }
            try Syscall.unlink(path)
            try syncDirectory(parentDirectory(of: path))
            return aside
        }
        throw FileSystemError(operation: "setting aside", path: path, errno: .exists)
    }

    /// Removes the file at `path`; a missing file is not an error.
    package static func remove(_ path: String) throws(FileSystemError) {
        do {
            try Syscall.unlink(path)
        } catch  where error.isNotFound {
        }
    }

    /// Syncs a directory so that a rename or a new entry in it survives a power cut.
    package static func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd = try Syscall.open(path, O_RDONLY | O_DIRECTORY, doing: "opening directory")
        defer { Syscall.close(fd) }
        try Syscall.fsync(fd, path: path)
    }

    /// The size in bytes of the file at `path`.
    package static func size(of path: String) throws(FileSystemError) -> Int64 {
        guard let info = try Syscall.status(path) else {
            throw FileSystemError(operation: "inspecting", path: path, errno: .notFound)
        }
        return Int64(info.st_size)
    }

    /// The permission bits of the file at `path`, or `nil` if it does not exist.
    package static func mode(of path: String) throws(FileSystemError) -> UInt32? {
        guard let info = try Syscall.status(path) else { return nil }
        return UInt32(info.st_mode & 0o7777)
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
