// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A system call's errno, the one type every module reports it with: read once, right after the
/// call that set it (a `close` in between may set its own), and shown in the system's words.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's errno now.
    public static var current: Errno { Errno(Glibc.errno) }

    public var description: String { "\(String(cString: strerror(rawValue))) (errno \(rawValue))" }

    public static let interrupted = Errno(EINTR)
    /// EAGAIN, which is EWOULDBLOCK on Linux: no data yet, or a lock another process holds.
    public static let wouldBlock = Errno(EAGAIN)
    public static let notFound = Errno(ENOENT)
    public static let exists = Errno(EEXIST)
    public static let permissionDenied = Errno(EACCES)
    public static let notPermitted = Errno(EPERM)
    public static let fileTooLarge = Errno(EFBIG)
    public static let nameTooLong = Errno(ENAMETOOLONG)
    public static let badDescriptor = Errno(EBADF)
    public static let notSocket = Errno(ENOTSOCK)
    public static let busy = Errno(EBUSY)
    public static let connectionRefused = Errno(ECONNREFUSED)
    public static let noDevice = Errno(ENODEV)
}
