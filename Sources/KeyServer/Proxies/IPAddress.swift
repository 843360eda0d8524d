// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// An IPv4 or IPv6 address as its bytes: what a trusted-proxy network is matched against and what
/// a forwarded client is named by. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is its IPv4
/// address, so that one client is one client whichever way a proxy writes it.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6).
    package let bytes: [UInt8]

    package init?(_ text: some StringProtocol) {
        let text = String(text)
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 {
            bytes = withUnsafeBytes(of: &four) { Array($0) }
            return
        }
        var six = in6_addr()
        guard inet_pton(AF_INET6, text, &six) == 1 else { return nil }
        let all = withUnsafeBytes(of: &six) { Array($0) }
        bytes = all.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) ? Array(all.suffix(4)) : all
    }

    /// 4 or 16 bytes, as they are.
    package init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address is 4 or 16 bytes")
        self.bytes = bytes
    }

    package var isIPv4: Bool { bytes.count == 4 }

    /// What rate limits count a client by: an IPv4 address whole, an IPv6 one by its /64
    /// (`2001:db8:1:2::/64`), since one subscriber is usually given a whole /64 and could
    /// otherwise draw a fresh budget per address.
    package var limitKey: String {
        guard !isIPv4 else { return description }
        return IPAddress(bytes: Array(bytes.prefix(8)) + Array(repeating: 0, count: 8)).description + "/64"
    }

    /// The canonical text: dotted IPv4, or RFC 5952's compressed IPv6.
    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = isIPv4 ? AF_INET : AF_INET6
        guard copy.withUnsafeMutableBytes({ inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
