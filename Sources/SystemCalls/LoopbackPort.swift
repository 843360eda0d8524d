// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// TCP ports on 127.0.0.1, for the programs the tests and benchmarks start beside each other
/// (a database server, key-server replicas, a load balancer) on ports they must be told.
package enum LoopbackPort {
    /// A port nothing listens on now: bound with port 0, read back, closed. Another program may
    /// take it before the caller's does, so callers that can retry do.
    package static func free() throws(Errno) -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Errno.current }
        defer { close(socket) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw Errno.current }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    package static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = loopback(port: UInt16(truncatingIfNeeded: port))
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port.bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
