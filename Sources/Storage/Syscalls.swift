// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The system calls this module makes, each retried on EINTR and turned into a `FileSystemError`.
/// Everything in the module goes through here, so there is one place to read for what it does to disk.
enum Syscall {
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, doing operation: String) throws(FileSystemError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if Glibc.errno == EINTR { continue }
            throw FileSystemError(operation: operation, path: path, errno: Glibc.errno)
        }
    }

    /// Writes every byte, continuing after short writes.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if Glibc.errno == EINTR { continue }
                throw FileSystemError(operation: "writing", path: path, errno: Glibc.errno)
            }
            offset += written
        }
    }

    /// Reads up to `limit` bytes; throws if the file holds more.
    static func readAll(_ fd: Int32, limit: Int, path: String) throws(FileSystemError) -> [UInt8] {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if Glibc.errno == EINTR { continue }
                throw FileSystemError(operation: "reading", path: path, errno: Glibc.errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > limit {
                throw FileSystemError(operation: "reading", path: path, errno: EFBIG, detail: "larger than the \(limit)-byte limit")
            }
        }
    }

    /// Reads up to `count` bytes at `offset` into `buffer`; fewer only at the end of the file.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, offset: Int64, path: String) throws(FileSystemError) -> Int {
        var total = 0
        while total < buffer.count {
            let count = Glibc.pread(fd, buffer.baseAddress! + total, buffer.count - total, off_t(offset) + off_t(total))
            if count < 0 {
                if Glibc.errno == EINTR { continue }
                throw FileSystemError(operation: "reading", path: path, errno: Glibc.errno)
            }
            if count == 0 { break }
            total += count
        }
        return total
    }

    static func ftruncate(_ fd: Int32, length: Int64, path: String) throws(FileSystemError) {
        while Glibc.ftruncate(fd, off_t(length)) != 0 {
            if Glibc.errno == EINTR { continue }
            throw FileSystemError(operation: "truncating", path: path, errno: Glibc.errno)
        }
    }

    static func fstatSize(_ fd: Int32, path: String) throws(FileSystemError) -> Int64 {
        var info = stat()
        guard Glibc.fstat(fd, &info) == 0 else {
            throw FileSystemError(operation: "inspecting", path: path, errno: Glibc.errno)
        }
        return Int64(info.st_size)
    }

    /// An exclusive advisory lock that fails, after two seconds' grace, if another process holds it.
    ///
    /// The grace is for a lock this process has just let go of: a child that another thread is
    /// starting holds a copy of every descriptor from fork until exec closes it (O_CLOEXEC acts only
    /// at exec), and with it the lock; on a loaded machine that child may wait a while for a CPU.
    /// A real second writer still holds it after the grace.
    static func lockExclusive(_ fd: Int32, path: String) throws(FileSystemError) {
        var graceLeft = 200
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if Glibc.errno == EINTR { continue }
            if Glibc.errno == EWOULDBLOCK && graceLeft > 0 {
                graceLeft -= 1
                usleep(10_000)
                continue
            }
            throw FileSystemError(
                operation: "locking", path: path, errno: Glibc.errno,
                detail: Glibc.errno == EWOULDBLOCK ? "another process holds it" : nil)
        }
    }

    /// The names in a directory, without "." and "..".
    static func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        guard let directory = opendir(path) else {
            throw FileSystemError(operation: "listing", path: path, errno: Glibc.errno)
        }
        defer { closedir(directory) }
        var names = [String]()
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    static func fsync(_ fd: Int32, path: String) throws(FileSystemError) {
        while Glibc.fsync(fd) != 0 {
            if Glibc.errno == EINTR { continue }
            throw FileSystemError(operation: "syncing", path: path, errno: Glibc.errno)
        }
    }

    /// Closes `fd`. EINTR is not retried: on Linux the descriptor is gone either way.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    static func rename(_ from: String, _ to: String) throws(FileSystemError) {
        guard Glibc.rename(from, to) == 0 else {
            throw FileSystemError(operation: "renaming \(from) to", path: to, errno: Glibc.errno)
        }
    }

    /// A second name for `from`; EEXIST when `to` exists, which nothing else changes.
    static func link(_ from: String, _ to: String) throws(FileSystemError) {
        guard Glibc.link(from, to) == 0 else {
            throw FileSystemError(operation: "linking \(from) to", path: to, errno: Glibc.errno)
        }
    }

    static func unlink(_ path: String) throws(FileSystemError) {
        guard Glibc.unlink(path) == 0 else {
            throw FileSystemError(operation: "removing", path: path, errno: Glibc.errno)
        }
    }

    static func mkdir(_ path: String, mode: mode_t) throws(FileSystemError) {
        guard Glibc.mkdir(path, mode) == 0 else {
            throw FileSystemError(operation: "creating directory", path: path, errno: Glibc.errno)
        }
    }

    static func chmod(_ path: String, mode: mode_t) throws(FileSystemError) {
        guard Glibc.chmod(path, mode) == 0 else {
            throw FileSystemError(operation: "setting the mode of", path: path, errno: Glibc.errno)
        }
    }

    /// `lstat`; `nil` when the path does not exist.
    static func status(_ path: String) throws(FileSystemError) -> stat? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if Glibc.errno == ENOENT { return nil }
            throw FileSystemError(operation: "inspecting", path: path, errno: Glibc.errno)
        }
        return info
    }
}
