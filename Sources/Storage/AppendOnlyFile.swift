// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import SystemCalls

/// One open file descriptor with one owner: the file is closed when the value goes away.
///
/// Opened for reading, or for appending (created 0600 if missing). Writes go to the end only; the
/// one exception is `truncate(to:)`, which recovery uses to cut a torn tail before appending.
/// Not `Sendable`: the actor or task that opened it is its only user.
package final class AppendOnlyFile {
    package enum Mode: Sendable {
        case readOnly
        /// Append, creating the file (mode 0600) if it does not exist.
        case append
    }

    package let path: String
    package let mode: Mode
    private let fd: Int32

    package init(path: String, mode: Mode) throws(FileSystemError) {
        self.path = path
        self.mode = mode
        // Non-blocking to open, as a FIFO would block the open itself; a regular file only.
        let opened: Int32
        switch mode {
        case .readOnly:
            opened = try Syscall.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, doing: "opening")
        case .append:
            opened = try Syscall.open(
                path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, mode: mode_t(DataDirectory.fileMode), doing: "opening")
        }
        do {
            try Syscall.requireRegularFile(opened, path: path)
        } catch {
            Syscall.close(opened)
            throw error
        }
        fd = opened
    }

    deinit {
        Syscall.close(fd)
    }

    /// The file's current size in bytes.
    package func size() throws(FileSystemError) -> Int64 {
        try Syscall.fstatSize(fd, path: path)
    }

    /// Reads into `buffer` from `offset`; returns the byte count, short only at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileSystemError) -> Int {
        try Syscall.pread(fd, buffer, offset: offset, path: path)
    }

    /// The whole file, refusing more than `limit` bytes.
    package func readAll(limit: Int) throws(FileSystemError) -> [UInt8] {
        let size = try self.size()
        guard size <= Int64(limit) else {
            throw FileSystemError(operation: "reading", path: path, errno: .fileTooLarge, detail: "\(size) bytes, over the \(limit)-byte limit")
        }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let count = try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(FileSystemError) in try read(into: raw, at: 0) }
        }.get()
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// Appends every byte (one `write` call unless the kernel writes short).
    package func append(_ bytes: UnsafeRawBufferPointer) throws(FileSystemError) {
        precondition(mode == .append, "append to a read-only file")
        try Syscall.writeAll(fd, bytes, path: path)
    }

    /// Cuts the file to `length` bytes.
    package func truncate(to length: Int64) throws(FileSystemError) {
        precondition(mode == .append, "truncate of a read-only file")
        try Syscall.ftruncate(fd, length: length, path: path)
    }

    /// Makes everything written so far durable.
    package func sync() throws(FileSystemError) {
        try Syscall.fsync(fd, path: path)
    }

    /// Takes an exclusive advisory lock, held until the file is closed; fails at once if another
    /// process holds it.
    package func lockExclusively() throws(FileSystemError) {
        try Syscall.lockExclusive(fd, path: path)
    }
}

extension DataDirectory {
    /// The names of the directory's entries, sorted.
    package func entries() throws(FileSystemError) -> [String] {
        try Syscall.listDirectory(path)
    }
}
