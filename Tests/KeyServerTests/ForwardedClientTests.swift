// SPDX-License-Identifier: GPL-3.0-or-later

import KeyServer
import Testing

/// `--trusted-proxy` and the client a forwarding header names: only a trusted peer is believed,
/// and from it the right-most address that is not a trusted proxy is the client.
struct ForwardedClientTests {
    static let proxies = try! TrustedProxies(parsing: ["127.0.0.2", "10.0.0.0/8", "2001:db8:ff::/48"])

    @Test func networksParseAndMatch() throws {
        #expect(Self.proxies.contains(IPAddress("10.200.3.4")!))
        #expect(!Self.proxies.contains(IPAddress("11.0.0.1")!))
        #expect(Self.proxies.contains(IPAddress("127.0.0.2")!))
        #expect(!Self.proxies.contains(IPAddress("127.0.0.3")!))
        #expect(Self.proxies.contains(IPAddress("2001:db8:ff:1::9")!))
        #expect(Self.proxies.contains(IPAddress("::ffff:10.1.1.1")!), "an IPv4-mapped address is its IPv4 one")
        #expect(try TrustedProxies(parsing: ["0.0.0.0/0"]).contains(IPAddress("203.0.113.9")!))
        #expect(IPAddress("2001:0db8:0000::0001")?.description == "2001:db8::1")
    }

    static let badNetworks: [(String, String)] = [
        ("10.0.0.1/33", "has a prefix length outside 0...32"), ("10.0.0.1/8", "has bits set past its /8 (the network is 10.0.0.0/8)"),
        ("proxy.example", "is not an IPv4 or IPv6 address"), ("10.0.0.0/", "has a prefix length"), ("::1/129", "outside 0...128"),
    ]

    @Test(arguments: badNetworks)
    func badNetworksAreNamed(_ text: String, _ problem: String) {
        #expect {
            _ = try TrustedProxies(parsing: [text])
        } throws: { error in
            "\(error)".hasPrefix("--trusted-proxy: '\(text)' ") && "\(error)".contains(problem)
        }
    }

    func client(_ peer: String, _ headers: [String: String]) throws -> String {
        try ForwardedClient.resolve(peer: peer, headers: headers, trusted: Self.proxies)
    }

    @Test func theRightMostUntrustedAddressIsTheClient() throws {
        #expect(try client("127.0.0.2", ["x-forwarded-for": "198.51.100.7"]) == "198.51.100.7")
        // What the client wrote itself (left) proves nothing; the proxies' own (right) are skipped.
        #expect(try client("127.0.0.2", ["x-forwarded-for": "1.2.3.4, 198.51.100.7, 10.1.1.1"]) == "198.51.100.7")
        #expect(try client("127.0.0.2", ["x-forwarded-for": "10.9.9.9, 10.1.1.1"]) == "10.9.9.9", "all trusted: the farthest")
        #expect(try client("127.0.0.2", [:]) == "127.0.0.2", "no header: the proxy itself")
        #expect(try client("127.0.0.2", ["x-forwarded-for": "[2001:db8::5]:4711"]) == "2001:db8::5")
        #expect(try client("127.0.0.2", ["x-forwarded-for": "198.51.100.7:5000"]) == "198.51.100.7")
        #expect(try client("127.0.0.2", ["forwarded": #"for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711""#]) == "2001:db8:cafe::17")
        #expect(try client("127.0.0.2", ["forwarded": "proto=https, for=192.0.2.61"]) == "192.0.2.61")
        // X-Forwarded-For first when a proxy sends both.
        #expect(try client("127.0.0.2", ["x-forwarded-for": "192.0.2.1", "forwarded": "for=192.0.2.2"]) == "192.0.2.1")
    }

    @Test func headersFromAnUntrustedPeerAreIgnored() throws {
        #expect(try client("127.0.0.1", ["x-forwarded-for": "198.51.100.7"]) == "127.0.0.1")
        #expect(try client("127.0.0.1", ["x-forwarded-for": "not an address"]) == "127.0.0.1", "not even parsed")
        #expect(try ForwardedClient.resolve(peer: "127.0.0.2", headers: ["x-forwarded-for": "198.51.100.7"], trusted: TrustedProxies()) == "127.0.0.2")
    }

    static let badHeaders: [([String: String], String)] = [
        (["x-forwarded-for": "198.51.100.7, evil"], "X-Forwarded-For: 'evil' is not an IP address"),
        (["x-forwarded-for": "198.51.100.7,"], "X-Forwarded-For: '' is not an IP address"),
        (["x-forwarded-for": "\"><script>"], "X-Forwarded-For: '?><script>' is not an IP address"),
        (["x-forwarded-for": "1.2.3.4:99999"], "is not an IP address"),
        (["x-forwarded-for": "[1.2.3.4]"], "is not an IP address"),
        (["x-forwarded-for": Array(repeating: "192.0.2.1", count: 33).joined(separator: ",")], "X-Forwarded-For: lists more than 32 addresses"),
        (["forwarded": "for=unknown"], "Forwarded: for=unknown is not an IP address"),
        (["forwarded": "for=_hidden"], "Forwarded: for=_hidden is not an IP address"),
        (["forwarded": "for"], "Forwarded: 'for' is not name=value"),
    ]

    @Test(arguments: badHeaders)
    func aBadHeaderFromATrustedProxyIsNamed(_ headers: [String: String], _ message: String) {
        #expect {
            _ = try client("127.0.0.2", headers)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
