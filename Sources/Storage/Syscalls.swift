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
                throw FileSystemError(operation: "reading", path: path, errno: 0, detail: "larger than the \(limit)-byte limit")
            }
        }
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
