// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A unix socket's address: a path, or with a leading `@` a name in the abstract namespace (as
/// systemd writes $NOTIFY_SOCKET). Checked against `sun_path`'s size when made.
package struct UnixSocketAddress: Sendable, CustomStringConvertible {
    private let bytes: [UInt8]
    package let description: String

    /// `nil` when the path does not fit in a socket address (108 bytes on Linux).
    package init?(_ path: String) {
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        self.bytes = bytes
        description = path
    }

    /// The address as the kernel takes it; a path gets its NUL, an abstract name does not.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}

extension SystemCall {
    /// Connects `fd` to a listening unix socket. Not retried on EINTR: the connection goes on
    /// being made, and a second connect would fail with EALREADY.
    package static func connect(_ fd: Int32, to address: UnixSocketAddress) throws(Errno) {
        guard address.withSockaddr({ Glibc.connect(fd, $0, $1) }) == 0 else { throw Errno.current }
    }

    /// Sends one datagram to `address` from an unconnected datagram socket; how many bytes went.
    package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, to address: UnixSocketAddress) throws(Errno) -> Int {
        try retrying { address.withSockaddr { Glibc.sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, $1) } }
    }
}
