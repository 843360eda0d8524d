// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// `gaen-keyserver serve --listen` on IPv6: `::1` alone, `::` taking IPv4 clients too, each client
/// counted by its own budget and named in the access log as itself; an address that is none is
/// refused at start by name.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerListenTests {
    typealias Client = KeyServerNetworkBoundsTests.Client

    /// Whether this machine has IPv6 loopback (a container may not).
    static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }()

    /// Whether `::` takes IPv4 clients here (net.ipv6.bindv6only = 0, Linux's default).
    static let dualStack = (try? String(contentsOfFile: "/proc/sys/net/ipv6/bindv6only", encoding: .utf8))?.hasPrefix("0") ?? false

    /// A publish of nothing (400 until the client's budget is spent, then 429) on a new
    /// connection from `host`: its status line.
    static func status(port: Int, host: String) throws -> String {
        let client = try Client(port: port, host: host)
        client.send("POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        return String(client.readToEnd().text.prefix(12))
    }

    @Test(.enabled(if: hasIPv6Loopback, "no IPv6 loopback on this machine"))
    func anIPv6AddressIsListenedOnAndItsClientsHaveABudget() throws {
        let files = try TemporaryDirectory()
        try KeyServerNetworkBoundsTests.withServer(
            ["--listen", "::1", "--requests-per-minute", "2"], output: files.path + "/out", errors: files.path + "/err", host: "::1"
        ) { port in
            let printed = try String(contentsOfFile: files.path + "/out", encoding: .utf8)
            #expect(printed.hasPrefix("listening on [::1]:\(port)\n"), "\(printed)")
            try #expect((0..<3).map { _ in try Self.status(port: port, host: "::1") } == ["HTTP/1.1 400", "HTTP/1.1 400", "HTTP/1.1 429"])
            #expect(throws: POSIXError.self, "an IPv6 listener took an IPv4 client") { try Client(port: port, host: "127.0.0.1") }
        }
        let log = try String(contentsOfFile: files.path + "/err", encoding: .utf8)
        #expect(log.contains(#"::1 "POST /v1/publish" 429 "#), "\(log)")
    }

    @Test(.enabled(if: hasIPv6Loopback && dualStack, "no IPv6 loopback, or net.ipv6.bindv6only is set"))
    func theUnspecifiedIPv6AddressTakesIPv4ClientsAsThemselves() throws {
        let files = try TemporaryDirectory()
        try KeyServerNetworkBoundsTests.withServer(["--listen", "::", "--requests-per-minute", "1"], errors: files.path + "/err") { port in
            try #expect(Self.status(port: port, host: "127.0.0.1") == "HTTP/1.1 400")
            try #expect(Self.status(port: port, host: "127.0.0.1") == "HTTP/1.1 429")
            // ::1 is another client, with a budget of its own.
            try #expect(Self.status(port: port, host: "::1") == "HTTP/1.1 400")
        }
        let log = try String(contentsOfFile: files.path + "/err", encoding: .utf8)
        #expect(log.contains(#" 127.0.0.1 "POST /v1/publish" 429 "#), "the IPv4 client is not named as itself: \(log)")
        #expect(!log.contains("::ffff:"), "\(log)")
    }

    @Test(arguments: ["localhost", "127.0.0.256", "::1::", ""])
    func aListenAddressThatIsNoneIsRefusedByName(_ address: String) throws {
        let run = try ToolRunner.run(
            "gaen-keyserver",
            ["serve", "--listen", address, "--data-dir", "/nonexistent", "--verification-key", "/nonexistent", "--export-key", "/nonexistent"])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("--listen: '\(address)' is not an IPv4 or IPv6 address"), "\(run.standardError)")
    }
}
