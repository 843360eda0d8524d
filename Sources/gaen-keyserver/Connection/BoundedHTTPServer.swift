// SPDX-License-Identifier: GPL-3.0-or-later

import FlyingSocks
import ENCore
import Foundation
import Glibc
import KeyServer
import Logging
import Synchronization

/// gaen-keyserver's HTTP/1.1 server: FlyingSocks' async sockets and poll, with our own request
/// reading so that every part of a request is bounded (FlyingFox's HTTPServer bounds none; see
/// docs/keyserver.md, "Bounds on the network"). A refused request is answered and its
/// connection closed; idle and slow connections are shut down; connections are capped.
final class BoundedHTTPServer: Sendable {
    typealias Handler = @Sendable (KeyServerAPI.Request) async -> KeyServerAPI.Response

    let limits: HTTPLimits
    /// Whose X-Forwarded-For and Forwarded are believed (`--trusted-proxy`).
    let trustedProxies: TrustedProxies
    let pool: any AsyncSocketPool
    let handler: Handler
    /// One line per request, or nil for none (`--no-access-log`).
    let accessLog: AccessLog?
    private let open = Mutex(OpenConnections())

    /// The connections being served, in all and by client.
    private struct OpenConnections {
        var total = 0
        var byClient: [String: Int] = [:]

        /// Admits a connection of `client` (nil: a trusted proxy's, not counted by client), or
        /// says which cap refuses it.
        mutating func admit(_ client: String?, limits: HTTPLimits) -> String? {
            guard total < limits.connections else { return "too many connections open" }
            if let client {
                guard byClient[client, default: 0] < limits.connectionsPerClient else { return "too many connections from this client" }
                byClient[client, default: 0] += 1
            }
            total += 1
            return nil
        }

        mutating func release(_ client: String?) {
            total -= 1
            if let client {
                let left = byClient[client, default: 1] - 1
                byClient[client] = left > 0 ? left : nil
            }
        }
    }

    init(
        limits: HTTPLimits, trustedProxies: TrustedProxies = TrustedProxies(), pool: some AsyncSocketPool, accessLog: AccessLog? = nil,
        handler: @escaping Handler
    ) {
        self.limits = limits
        self.trustedProxies = trustedProxies
        self.pool = pool
        self.accessLog = accessLog
        self.handler = handler
    }

    /// Binds and listens on an IPv4 or IPv6 address; `run` then serves on the socket. `::` takes
    /// IPv4 clients too unless the kernel's net.ipv6.bindv6only says otherwise; they arrive as
    /// IPv4-mapped addresses, which `IPAddress` reads as the IPv4 ones.
    func listen(on address: IPAddress, port: UInt16) throws -> Socket {
        let socket = try Socket(domain: address.isIPv4 ? AF_INET : AF_INET6, type: .stream)
        try socket.setValue(true, for: .localAddressReuse)
        if address.isIPv4 {
            try socket.bind(to: .inet(ip4: address.description, port: port))
        } else {
            try socket.bind(to: .inet6(ip6: address.description, port: port))
        }
        try socket.listen()
        return socket
    }

    func run(on socket: Socket) async throws {
        try await pool.prepare()
        let listener = try AsyncSocket(socket: socket, pool: pool)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.pool.run() }
            group.addTask {
                try await withThrowingDiscardingTaskGroup { connections in
                    for try await client in listener.sockets {
                        let peer = ClientAddress(peerOf: client.socket)
                        let counted = self.isTrustedProxy(peer) ? nil : peer.limitKey
                        if let refusal = self.open.withLock({ $0.admit(counted, limits: self.limits) }) {
                            Self.refuseAtOnce(client.socket)
                            self.accessLog?.refusedConnection(from: peer, reason: refusal)
                            continue
                        }
                        connections.addTask {
                            await self.serve(client, peer: peer)
                            self.open.withLock { $0.release(counted) }
                        }
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Over the cap: a 503 if the socket takes it at once, then closed.
    private static func refuseAtOnce(_ socket: Socket) {
        let bytes = Array(Self.head(status: 503, contentType: "text/plain", length: 0, keepAlive: false, headers: ["Retry-After": "1"]).utf8)
        _ = Glibc.send(socket.file.rawValue, bytes, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        try? socket.close()
    }

    private func isTrustedProxy(_ peer: ClientAddress) -> Bool {
        guard !trustedProxies.isEmpty, let address = IPAddress(peer.text) else { return false }
        return trustedProxies.contains(address)
    }

    private func serve(_ client: AsyncSocket, peer: ClientAddress) async {
        let fd = client.socket.file.rawValue
        let watchdog = Watchdog(fd: fd)
        let watching = Task { await watchdog.watch() }
        defer {
            watching.cancel()
            watchdog.close { try? client.close() }
        }
        var reader = RequestReader(source: SocketSource(socket: client), limits: limits)
        // A new connection must start its request soon: one that sends nothing holds a connection
        // of the cap for the first-byte timeout, not for the idle one of a kept-alive client.
        var waitSeconds = limits.firstByteTimeout
        while true {
            watchdog.arm(seconds: waitSeconds)
            waitSeconds = limits.idleTimeout
            guard (try? await reader.waitForRequest()) == true else { return }
            let started = ContinuousClock.now
            // A request that is not in by its deadline is answered 408: only reading stops.
            watchdog.arm(seconds: limits.requestTimeout, stopping: .reading)
            var keepAlive = false
            // A HEAD is answered with GET's head, Content-Length included, and no body (RFC 9110 §9.3.2).
            var headOnly = false
            var line = AccessLog.Line(client: peer.text)
            var response: KeyServerAPI.Response
            do {
                var request = try await reader.readHead()
                line.method = request.method
                headOnly = request.method == "HEAD"
                line.target = request.target
                let sender = try self.client(of: request, peer: peer)
                line.client = sender.text
                if request.headers["expect"]?.lowercased() == "100-continue", request.version == "HTTP/1.1" {
                    try await reader.refuseEarly(request)
                    try await client.write(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                }
                request.body = try await reader.readBody(of: request)
                keepAlive = request.keepAlive
                watchdog.disarm()
                let path = String(request.target.prefix { $0 != "?" })
                response = await handler(
                    KeyServerAPI.Request(method: request.method, path: path, headers: request.headers, body: request.body, client: sender.limitKey))
            } catch let refusal as RequestRefusal {
                response = Self.refusal(refusal)
            } catch {
                guard watchdog.fired else { return }  // the peer closed
                response = Self.refusal(RequestRefusal(status: 408, reason: "request not received in \(Int(limits.requestTimeout)) s"))
                keepAlive = false
            }
            watchdog.arm(seconds: limits.writeTimeout)
            var bytes = Data(Self.head(response, keepAlive: keepAlive).utf8)
            if !headOnly { bytes.append(contentsOf: response.body) }
            let written = (try? await client.write(bytes)) != nil
            line.status = response.status
            line.bytes = written && !headOnly ? response.body.count : 0
            line.milliseconds = Self.milliseconds(since: started)
            accessLog?.write(line)
            guard written else { return }
            guard keepAlive else {
                await lingeringClose(client, watchdog: watchdog)
                return
            }
        }
    }

    /// The request's client: the peer, or from a trusted proxy the client its forwarding header
    /// names; a header from a trusted proxy that does not parse is a 400 naming it.
    private func client(of request: ReadRequest, peer: ClientAddress) throws(RequestRefusal) -> ClientAddress {
        guard !trustedProxies.isEmpty else { return peer }
        do {
            let address = try ForwardedClient.resolve(peer: peer.text, headers: request.headers, trusted: trustedProxies)
            return address == peer.text ? peer : ClientAddress(address: address)
        } catch {
            throw RequestRefusal(status: 400, reason: error.description)
        }
    }

    /// A refusal of the HTTP layer, as the API's own refusals: JSON with the reason.
    static func refusal(_ refusal: RequestRefusal) -> KeyServerAPI.Response {
        KeyServerAPI.Response(status: refusal.status, contentType: "application/json", body: Array(#"{"error":"\#(refusal.reason)"}"#.utf8))
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    /// Closing with unread bytes makes the kernel reset the connection, which can discard the
    /// response before the client reads it, and fails a client still sending its body (libcurl:
    /// "Send failure: Broken pipe"). So our side ends first, then what the peer still sends is read
    /// and dropped: up to 1 MiB, until it is 5 s silent or 30 s have passed — nginx's
    /// lingering_timeout and lingering_time, the defaults of its lingering close
    /// (https://nginx.org/en/docs/http/ngx_http_core_module.html#lingering_close). The 2 s this
    /// waited before were less than a client on a loaded machine can stall between two writes.
    private func lingeringClose(_ client: AsyncSocket, watchdog: Watchdog) async {
        Glibc.shutdown(client.socket.file.rawValue, Int32(SHUT_WR))
        let end = ContinuousClock.now + Self.lingeringTime
        var dropped = 0
        while dropped < 1_048_576 {
            let wait = min(Self.lingeringTimeout, end - ContinuousClock.now)
            guard wait > .zero else { return }
            watchdog.arm(seconds: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            guard let bytes = try? await client.read(atMost: 16_384), !bytes.isEmpty else { return }
            dropped += bytes.count
        }
    }

    static let lingeringTimeout = Duration.seconds(5)
    static let lingeringTime = Duration.seconds(30)

    static func head(status: Int, contentType: String, length: Int, keepAlive: Bool, headers: [String: String] = [:]) -> String {
        // Names and values are the API's own constants and numbers: no CR or LF can come from a client.
        let extra = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
        // Date: an origin server with a clock sends it (RFC 9110 §6.6.1), and gaend takes it as a
        // witness to its own clock.
        let date = HTTPDate.format(UnixTime(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
        // A 304 has no body and no length of its own: a Content-Length would have to be the 200's.
        let contentLength = status == 304 ? "" : "Content-Length: \(length)\r\n"
        return "HTTP/1.1 \(status) \(reasons[status] ?? (status < 400 ? "OK" : "Error"))\r\nDate: \(date)\r\nContent-Type: \(contentType)\r\n"
            + contentLength + extra + "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
    }

    static func head(_ response: KeyServerAPI.Response, keepAlive: Bool) -> String {
        head(status: response.status, contentType: response.contentType, length: response.body.count, keepAlive: keepAlive, headers: response.headers)
    }

    static let reasons = [
        200: "OK", 304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 412: "Precondition Failed", 413: "Content Too Large", 429: "Too Many Requests", 414: "URI Too Long",
        431: "Request Header Fields Too Large", 500: "Internal Server Error",
        501: "Not Implemented", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]
}

/// The reader's bytes off FlyingSocks' socket.
struct SocketSource: ByteSource {
    let socket: AsyncSocket

    func read(atMost count: Int) async throws -> [UInt8] { try await socket.read(atMost: count) }
}

extension RequestReader {
    /// An Expect: 100-continue request whose declared body is refused is refused before the
    /// client sends it.
    func refuseEarly(_ request: ReadRequest) async throws {
        if let length = request.headers["content-length"], let count = Int(length), count > limits.body {
            throw RequestRefusal(status: 413, reason: "body too large")
        }
    }
}

/// Shuts a connection's socket down when its current deadline passes: a pending read or write
/// then fails, and the connection's task ends. FlyingSocks' reads have no timeout of their own.
/// A request's deadline stops only the reading, so that the 408 can still be written.
final class Watchdog: Sendable {
    enum Stop { case reading, everything }

    private struct State {
        var deadline: ContinuousClock.Instant?
        var stopping = Stop.everything
        /// Whether a deadline passed since the last arm.
        var fired = false
        /// Whether the socket is closed (its descriptor may then be another's).
        var closed = false
    }

    let fd: Int32
    private let state = Mutex(State())

    init(fd: Int32) { self.fd = fd }

    func arm(seconds: Double, stopping: Stop = .everything) {
        state.withLock {
            $0.deadline = .now + .milliseconds(Int(seconds * 1000))
            $0.stopping = stopping
            $0.fired = false
        }
    }

    func disarm() { state.withLock { $0.deadline = nil } }

    /// Whether the last armed deadline passed.
    var fired: Bool { state.withLock { $0.fired } }

    /// Closes the socket under the lock the watchdog shuts it down under.
    func close(_ closing: () -> Void) {
        state.withLock {
            $0.closed = true
            closing()
        }
    }

    func watch() async {
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let next = state.withLock { state -> ContinuousClock.Instant?? in
                guard !state.closed else { return .none }
                guard let deadline = state.deadline, deadline <= now else { return .some(state.deadline) }
                Glibc.shutdown(fd, Int32(state.stopping == .reading ? SHUT_RD : SHUT_RDWR))
                state.fired = true
                state.deadline = nil
                return .some(nil)
            }
            guard case .some(let deadline) = next else { return }
            let wake = min(deadline ?? now + .seconds(1), now + .seconds(1))
            try? await Task.sleep(until: wake, clock: .continuous)
        }
    }
}
