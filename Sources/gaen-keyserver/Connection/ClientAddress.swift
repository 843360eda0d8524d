// SPDX-License-Identifier: GPL-3.0-or-later

import FlyingSocks
import KeyServer

/// Who is on the other end of a connection, as the access log shows it and as rate limits count
/// clients.
struct ClientAddress: Sendable, Equatable {
    /// The address as printed: `127.0.0.1`, `2001:db8::1`, or `unknown`.
    let text: String
    /// What rate limits key on: an IPv4 address whole, an IPv6 address by its /64, since one
    /// subscriber is usually given a whole /64 and could otherwise draw a fresh budget per address.
    let limitKey: String

    init(text: String, limitKey: String) {
        self.text = text
        self.limitKey = limitKey
    }

    /// A client named by its address alone: one a trusted proxy forwarded.
    init(address: String) {
        let parsed = IPAddress(address)
        self.init(text: address, limitKey: parsed.map { $0.isIPv4 ? address : ClientNetwork.prefix64(address) ?? address } ?? address)
    }

    init(peerOf socket: Socket) {
        switch try? socket.remotePeer() {
        case .ip4(let address, _)?: self.init(text: address, limitKey: address)
        case .ip6(let address, _)?: self.init(text: address, limitKey: ClientNetwork.prefix64(address) ?? address)
        case .unix?, nil: self.init(text: "unknown", limitKey: "")
        }
    }
}
