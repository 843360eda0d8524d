// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A system call's errno, the one type every module reports it with: read once, right after the
/// call that set it (a `close` in between may set its own), and shown in the system's words.
package struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int32

    package init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's errno now.
    package static var current: Errno { Errno(Glibc.errno) }

    package var description: String { "\(String(cString: strerror(rawValue))) (errno \(rawValue))" }

    package static let interrupted = Errno(EINTR)
    /// EAGAIN, which is EWOULDBLOCK on Linux: no data yet, or a lock another process holds.
    package static let wouldBlock = Errno(EAGAIN)
    package static let notFound = Errno(ENOENT)
    package static let exists = Errno(EEXIST)
    package static let permissionDenied = Errno(EACCES)
    package static let notPermitted = Errno(EPERM)
    package static let fileTooLarge = Errno(EFBIG)
    package static let nameTooLong = Errno(ENAMETOOLONG)
    package static let badDescriptor = Errno(EBADF)
    package static let notSocket = Errno(ENOTSOCK)
    package static let busy = Errno(EBUSY)
    package static let connectionRefused = Errno(ECONNREFUSED)
    package static let noDevice = Errno(ENODEV)
    /// A timerfd armed with TFD_TIMER_CANCEL_ON_SET, read after the clock was set.
    package static let canceled = Errno(ECANCELED)
}
