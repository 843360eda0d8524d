// SPDX-License-Identifier: GPL-3.0-or-later

/// The networks whose connections are reverse proxies (`--trusted-proxy CIDR`): only for these is
/// `X-Forwarded-For` or `Forwarded` believed (docs/keyserver.md, "Behind a proxy").
package struct TrustedProxies: Sendable, Equatable {
    /// One network: an address and how many of its leading bits a member shares.
    package struct Network: Sendable, Equatable, CustomStringConvertible {
        package let address: IPAddress
        package let prefixLength: Int

        /// `192.0.2.0/24`, `2001:db8::/32`, or an address alone (all its bits).
        package init(parsing text: String) throws(TrustedProxyError) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = IPAddress(parts[0]) else { throw TrustedProxyError(text, "is not an IPv4 or IPv6 address") }
            let width = address.bytes.count * 8
            var length = width
            if parts.count == 2 {
                guard let value = Int(parts[1]), (0...width).contains(value), parts[1].allSatisfy(\.isASCII) else {
                    throw TrustedProxyError(text, "has a prefix length outside 0...\(width)")
                }
                length = value
            }
            // Host bits set mean a typo as often as not: refused, so the rule trusts what it says.
            guard Self.masked(address.bytes, length) == address.bytes else {
                throw TrustedProxyError(
                    text, "has bits set past its /\(length) (the network is \(IPAddress(bytes: Self.masked(address.bytes, length)))/\(length))")
            }
            self.address = address
            self.prefixLength = length
        }

        package func contains(_ other: IPAddress) -> Bool {
            other.bytes.count == address.bytes.count && Self.masked(other.bytes, prefixLength) == address.bytes
        }

        package var description: String { "\(address)/\(prefixLength)" }

        static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
            bytes.enumerated().map { index, byte in
                let kept = min(8, max(0, length - index * 8))
                return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
            }
        }
    }

    package let networks: [Network]

    package init(_ networks: [Network] = []) { self.networks = networks }

    package init(parsing texts: [String]) throws(TrustedProxyError) {
        var networks = [Network]()
        for text in texts { networks.append(try Network(parsing: text)) }
        self.init(networks)
    }

    package var isEmpty: Bool { networks.isEmpty }

    package func contains(_ address: IPAddress) -> Bool { networks.contains { $0.contains(address) } }
}

/// A `--trusted-proxy` that is not a network.
package struct TrustedProxyError: Error, CustomStringConvertible {
    package let description: String

    init(_ text: String, _ problem: String) { description = "--trusted-proxy: '\(text.prefix(64))' \(problem)" }
}
