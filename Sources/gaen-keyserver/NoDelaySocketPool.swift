// SPDX-License-Identifier: GPL-3.0-or-later

import FlyingSocks
import Glibc

/// FlyingFox's socket pool with Nagle's algorithm turned off on every TCP socket it waits for.
///
/// FlyingFox writes a response's header and body in two sends. On a kept-alive connection Nagle
/// holds the body until the header is acknowledged, and the client delays that acknowledgement
/// (40 ms on Linux): `wrk -c16` measured 364 index.txt requests/s, every one ~44 ms. FlyingFox has
/// no hook for its sockets' options, but every socket passes through the pool when it first waits:
/// the listener waits before it accepts anything, and accepted sockets inherit TCP_NODELAY from it
/// on Linux; setting it again on each waiting socket covers other systems. Not a TCP socket
/// (a unix one): setsockopt fails, which is fine.
struct NoDelaySocketPool<Base: AsyncSocketPool>: AsyncSocketPool {
    let base: Base

    func prepare() async throws { try await base.prepare() }

    func run() async throws { try await base.run() }

    func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
        var on: Int32 = 1
        _ = setsockopt(socket.file.rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        try await base.suspendSocket(socket, untilReadyFor: events)
    }
}
