// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// Bytes in an anonymous memory file (`memfd_create`: never on disk, gone with its last
/// descriptor), with a path for code that will only open a file by name: `/proc/self/fd/N`, which
/// opens a new descriptor of the same file. The file lives as long as this value, or as long as
/// whatever opened the path keeps it open.
public final class AnonymousMemoryFile: Sendable {
    public let path: String
    private let descriptor: Int32

    /// A file holding `bytes`; `name` is what /proc shows for it (memfd:NAME).
    public init(name: String, bytes: [UInt8]) throws(FileSystemError) {
        guard let memfdCreate = Self.memfdCreate else { throw FileSystemError(operation: "making a memory file", path: name, errno: ENOSYS) }
        let descriptor = memfdCreate(name, Self.closeOnExec)
        guard descriptor >= 0 else { throw FileSystemError(operation: "making a memory file", path: name, errno: errno) }
        let path = "/proc/self/fd/\(descriptor)"
        let failure = bytes.withUnsafeBytes { buffer -> FileSystemError? in
            do throws(FileSystemError) {
                try Syscall.writeAll(descriptor, buffer, path: path)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            Syscall.close(descriptor)
            throw failure
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { Syscall.close(descriptor) }

    /// `memfd_create` is declared only under _GNU_SOURCE, which the Glibc module does not define;
    /// glibc has exported it since 2.27, so it is looked up by name.
    private static let memfdCreate: (@convention(c) (UnsafePointer<CChar>, UInt32) -> Int32)? = dlsym(nil, "memfd_create").map {
        unsafeBitCast($0, to: (@convention(c) (UnsafePointer<CChar>, UInt32) -> Int32).self)
    }

    /// MFD_CLOEXEC, from linux/memfd.h, for the same reason.
    private static let closeOnExec: UInt32 = 0x0001
}
