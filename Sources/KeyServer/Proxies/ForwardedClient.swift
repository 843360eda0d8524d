// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Who sent a request that may have come through reverse proxies: for a connection from a trusted
/// proxy, the right-most address of `X-Forwarded-For` (else of `Forwarded`'s `for=`) that is not
/// itself a trusted proxy, as nginx's `real_ip_recursive on` and Caddy's `trusted_proxies` find
/// it; every address left of it was written by the client and proves nothing. From anyone else
/// the headers are ignored: they are the client's own words.
package enum ForwardedClient {
    /// Addresses a header may list: a chain of proxies is short, and a long list is an attack.
    package static let maximumHops = 32

    /// The client's address; the peer's when the peer is not trusted or the headers name no one
    /// (a proxy's own health check). Throws, naming the header, when a trusted proxy sent a list
    /// that does not parse: a broken proxy is an operator's fault to see, not a client to guess.
    package static func resolve(peer: String, headers: [String: String], trusted: TrustedProxies) throws(ForwardedError) -> String {
        guard !trusted.isEmpty, let address = IPAddress(peer), trusted.contains(address) else { return peer }
        let chain: [IPAddress]
        if let list = headers["x-forwarded-for"] {
            chain = try forwardedFor(list)
        } else if let list = headers["forwarded"] {
            chain = try forwarded(list)
        } else {
            return peer
        }
        guard let first = chain.first else { return peer }
        // All trusted: the farthest one is the client (nginx does the same).
        return (chain.last { !trusted.contains($0) } ?? first).description
    }

    /// `X-Forwarded-For: client, proxy1, proxy2` (several header lines arrive joined by ", ").
    static func forwardedFor(_ list: String) throws(ForwardedError) -> [IPAddress] {
        let items = list.split(separator: ",", omittingEmptySubsequences: false)
        guard items.count <= maximumHops else { throw ForwardedError("X-Forwarded-For", "lists more than \(maximumHops) addresses") }
        var chain = [IPAddress]()
        for item in items {
            let entry = item.trimmingCharacters(in: [" ", "\t"])
            guard let address = node(entry) else { throw ForwardedError("X-Forwarded-For", "'\(printable(entry))' is not an IP address") }
            chain.append(address)
        }
        return chain
    }

    /// RFC 7239: `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711"`. Elements
    /// without `for=` add no hop; an obfuscated or `unknown` node names no address to count by.
    static func forwarded(_ list: String) throws(ForwardedError) -> [IPAddress] {
        let elements = list.split(separator: ",", omittingEmptySubsequences: false)
        guard elements.count <= maximumHops else { throw ForwardedError("Forwarded", "lists more than \(maximumHops) elements") }
        var chain = [IPAddress]()
        for element in elements {
            for pair in element.split(separator: ";", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingCharacters(in: [" ", "\t"]).lowercased()
                guard parts.count == 2 else {
                    if name.isEmpty { continue }
                    throw ForwardedError("Forwarded", "'\(printable(String(pair)))' is not name=value")
                }
                guard name == "for" else { continue }
                var value = parts[1].trimmingCharacters(in: [" ", "\t"])
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                guard let address = node(value) else { throw ForwardedError("Forwarded", "for=\(printable(value)) is not an IP address") }
                chain.append(address)
            }
        }
        return chain
    }

    /// A node as proxies write one: `192.0.2.1`, `192.0.2.1:443`, `2001:db8::1`, `[2001:db8::1]`
    /// or `[2001:db8::1]:443`.
    static func node(_ text: String) -> IPAddress? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            let inner = text[text.index(after: text.startIndex)..<close]
            guard let address = IPAddress(inner), !address.isIPv4 || inner.contains(":") else { return nil }
            return address
        }
        if let address = IPAddress(text) { return address }
        // IPv4 with a port: exactly one colon.
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, isPort(parts[1]), let address = IPAddress(parts[0]), address.isIPv4 else { return nil }
        return address
    }

    static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber } && (Int(text) ?? 70_000) <= 65_535
    }

    /// At most 64 printable ASCII characters of what a proxy sent, for the error (and its JSON:
    /// no quote or backslash either).
    static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(64).map { $0.value >= 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" ? $0 : "?" }))
    }
}

/// A forwarding header from a trusted proxy that does not parse: answered 400 with this.
package struct ForwardedError: Error, CustomStringConvertible {
    package let description: String

    init(_ header: String, _ problem: String) { description = "\(header): \(problem)" }
}
