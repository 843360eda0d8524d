// SPDX-License-Identifier: GPL-3.0-or-later

import FlyingSocks
import KeyServer

/// Who is on the other end of a connection, as the access log shows it and as rate limits count
/// clients.
struct ClientAddress: Sendable, Equatable {
    /// The address as printed: `127.0.0.1`, `2001:db8::1`, or `unknown`.
    let text: String
    /// What rate limits key on: `IPAddress.limitKey` (an IPv6 client by its /64), or the text as
    /// it came if it is no address.
    let limitKey: String

    init(text: String, limitKey: String) {
        self.text = text
        self.limitKey = limitKey
    }

    /// A client named by its address alone: one a trusted proxy forwarded, or a peer. It is shown
    /// in its canonical form, so an IPv4 client of a `::` listener is `192.0.2.1` as on an IPv4
    /// one, not `::ffff:192.0.2.1`.
    init(address: String) {
        let parsed = IPAddress(address)
        self.init(text: parsed?.description ?? address, limitKey: parsed?.limitKey ?? address)
    }

    init(peerOf socket: Socket) {
        switch try? socket.remotePeer() {
        case .ip4(let address, _)?, .ip6(let address, _)?: self.init(address: address)
        case .unix?, nil: self.init(text: "unknown", limitKey: "")
        }
    }
}
