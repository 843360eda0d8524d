// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Client addresses as rate limits count them.
package enum ClientNetwork {
    /// The /64 prefix of an IPv6 address (its first four groups, expanded), or the IPv4 address of
    /// an IPv4-mapped one; nil if it does not parse.
    package static func prefix64(_ address: String) -> String? {
        if address.lowercased().hasPrefix("::ffff:"), address.contains(".") { return String(address.dropFirst(7)) }
        guard address.components(separatedBy: "::").count <= 2, !address.contains(":::") else { return nil }
        let halves = address.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false).map { $0.split(separator: ":").map(String.init) }
        guard halves.count <= 2, halves.allSatisfy({ $0.allSatisfy { (1...4).contains($0.count) && UInt16($0, radix: 16) != nil } }) else { return nil }
        var groups = halves[0]
        if halves.count == 2 {
            let missing = 8 - halves[0].count - halves[1].count
            guard missing >= 1 else { return nil }
            groups += Array(repeating: "0", count: missing) + halves[1]
        }
        guard groups.count == 8 else { return nil }
        return groups.prefix(4).map { String(UInt16($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":") + "::/64"
    }
}
