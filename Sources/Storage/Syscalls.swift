// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import SystemCalls

/// The system calls this module makes, each turned into a `FileSystemError` naming the path.
/// Everything in the module goes through here, so there is one place to read for what it does to
/// disk; the EINTR loop and the errno reading are `SystemCall`'s.
enum Syscall {
    /// `body` retried on EINTR; its failure as a `FileSystemError`.
    private static func call<T: FixedWidthInteger>(_ operation: String, _ path: String, _ body: () -> T) throws(FileSystemError) -> T {
        do {
            return try SystemCall.retrying(body)
        } catch {
            throw FileSystemError(operation: operation, path: path, errno: error)
        }
    }

    /// `body` once (calls that do not fail with EINTR on a local file system, and must not be
    /// repeated if they did: a repeated link or mkdir would report EEXIST for its own success).
    private static func once(_ operation: String, _ path: String, _ body: () -> Int32) throws(FileSystemError) {
        guard body() == 0 else { throw FileSystemError(operation: operation, path: path, errno: .current) }
    }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, doing operation: String) throws(FileSystemError) -> Int32 {
        try call(operation, path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// Writes every byte, continuing after short writes.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) {
        do {
            try SystemCall.writeAll(fd, bytes)
        } catch {
            throw FileSystemError(operation: "writing", path: path, errno: error)
        }
    }

    /// Reads up to `limit` bytes; throws if the file holds more.
    static func readAll(_ fd: Int32, limit: Int, path: String) throws(FileSystemError) -> [UInt8] {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try chunk.withUnsafeMutableBytes { raw in
                Result { () throws(FileSystemError) in try call("reading", path) { Glibc.read(fd, raw.baseAddress, raw.count) } }
            }.get()
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > limit {
                throw FileSystemError(operation: "reading", path: path, errno: .fileTooLarge, detail: "larger than the \(limit)-byte limit")
            }
        }
    }

    /// Reads up to `count` bytes at `offset` into `buffer`; fewer only at the end of the file.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, offset: Int64, path: String) throws(FileSystemError) -> Int {
        var total = 0
        while total < buffer.count {
            let count = try call("reading", path) { Glibc.pread(fd, buffer.baseAddress! + total, buffer.count - total, off_t(offset) + off_t(total)) }
            if count == 0 { break }
            total += count
        }
        return total
    }

    static func ftruncate(_ fd: Int32, length: Int64, path: String) throws(FileSystemError) {
        _ = try call("truncating", path) { Glibc.ftruncate(fd, off_t(length)) }
    }

    /// Refuses anything but a regular file (a FIFO, a device, a socket, a directory) behind `fd`:
    /// reading a FIFO opened without a writer would block forever (issue 53). Opened with
    /// O_NONBLOCK, the descriptor is then set blocking again, as reads of a regular file are.
    static func requireRegularFile(_ fd: Int32, path: String) throws(FileSystemError) {
        var info = stat()
        _ = try call("inspecting", path) { Glibc.fstat(fd, &info) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw FileSystemError(operation: "opening", path: path, errno: nil, detail: FileSystemError.notRegularFile)
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

    static func fstatSize(_ fd: Int32, path: String) throws(FileSystemError) -> Int64 {
        var info = stat()
        _ = try call("inspecting", path) { Glibc.fstat(fd, &info) }
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
        while true {
            do {
                _ = try SystemCall.retrying { flock(fd, LOCK_EX | LOCK_NB) }
                return
            } catch  where error == .wouldBlock && graceLeft > 0 {
                graceLeft -= 1
                usleep(10_000)
            } catch {
                throw FileSystemError(operation: "locking", path: path, errno: error, detail: error == .wouldBlock ? "another process holds it" : nil)
            }
        }
    }

    /// The names in a directory, without "." and "..".
    static func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        guard let directory = opendir(path) else {
            throw FileSystemError(operation: "listing", path: path, errno: .current)
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
        _ = try call("syncing", path) { Glibc.fsync(fd) }
    }

    static func close(_ fd: Int32) {
        SystemCall.close(fd)
    }

    static func rename(_ from: String, _ to: String) throws(FileSystemError) {
        try once("renaming \(from) to", to) { Glibc.rename(from, to) }
    }

    /// A second name for `from`; EEXIST when `to` exists, which nothing else changes.
    static func link(_ from: String, _ to: String) throws(FileSystemError) {
        try once("linking \(from) to", to) { Glibc.link(from, to) }
    }

    static func unlink(_ path: String) throws(FileSystemError) {
        try once("removing", path) { Glibc.unlink(path) }
    }

    static func mkdir(_ path: String, mode: mode_t) throws(FileSystemError) {
        try once("creating directory", path) { Glibc.mkdir(path, mode) }
    }

    static func chmod(_ path: String, mode: mode_t) throws(FileSystemError) {
        try once("setting the mode of", path) { Glibc.chmod(path, mode) }
    }

    /// `lstat`; `nil` when the path does not exist.
    static func status(_ path: String) throws(FileSystemError) -> stat? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let failure = Errno.current
            if failure == .notFound { return nil }
            throw FileSystemError(operation: "inspecting", path: path, errno: failure)
        }
        return info
    }
}
