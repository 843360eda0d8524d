// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The descriptor calls the daemon makes outside libdbus and libcrypto: the HCI transports, the
/// D-Bus pump's wake channel, the systemd notifier and the data directory's files. Each retries
/// EINTR where a retry is right and reports failure as `Errno`, so that loop and the errno
/// reading live here once.
package enum SystemCall {
    /// Runs `call` again while it fails with EINTR; its result, or the errno it failed with.
    package static func retrying<T: FixedWidthInteger>(_ call: () -> T) throws(Errno) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let failure = Errno.current
            if failure != .interrupted { throw failure }
        }
    }

    /// Closes `fd`. Linux releases the descriptor even when close reports an error (EINTR
    /// included), so it is never retried and its error is of no use.
    package static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Reads what is there, up to the buffer's size; 0 at the end of the stream.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes what it can of `bytes` and says how much. On a socket it sends with MSG_NOSIGNAL:
    /// a peer that hung up is EPIPE to report, not a SIGPIPE that ends the process.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        do {
            return try retrying { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
        } catch  where error == .notSocket {
            return try retrying { Glibc.write(fd, bytes.baseAddress, bytes.count) }
        }
    }

    /// Writes every byte, continuing after short writes.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
    }

    /// A new socket, closed on exec.
    package static func socket(domain: Int32, type: Int32, protocol: Int32 = 0) throws(Errno) -> Int32 {
        try retrying { Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`) }
    }

    /// Sets O_NONBLOCK on `fd`.
    package static func setNonBlocking(_ fd: Int32) throws(Errno) {
        let flags = try retrying { fcntl(fd, F_GETFL) }
        _ = try retrying { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }
}
