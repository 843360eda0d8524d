// SPDX-License-Identifier: GPL-3.0-or-later

import KeyServer
import Synchronization

/// gaen-keyserver's HTTP/1.1 reading (`RequestReader`, the code between its socket and the API):
/// the input is what a client sends on one connection, cut into reads of a size the first byte
/// picks, read request after request as the server does until a refusal or the end. The limits
/// are small, so that short inputs reach every bound; what the reader returns must be within them.
/// Each head's forwarding headers are read as from a trusted proxy (`ForwardedClient`).
enum HTTPRequestFuzzing {
    static let limits: HTTPLimits = {
        var limits = HTTPLimits()
        limits.requestLine = 64
        limits.headerBytes = 256
        limits.headerCount = 8
        limits.body = 512
        return limits
    }()

    /// The input's bytes, handed out `chunk` at a time.
    final class Source: ByteSource {
        private let state: Mutex<(bytes: [UInt8], offset: Int)>
        let chunk: Int

        init(_ bytes: [UInt8], chunk: Int) {
            state = Mutex((bytes, 0))
            self.chunk = chunk
        }

        func read(atMost count: Int) async throws -> [UInt8] {
            state.withLock { state in
                let end = min(state.bytes.count, state.offset + min(count, chunk))
                defer { state.offset = end }
                return Array(state.bytes[state.offset..<end])
            }
        }
    }

    /// `--trusted-proxy` as the fuzzed connection's peer is one: whatever a forwarding header holds,
    /// the client found is an address (the peer, or one the header names), or the header is refused.
    static let proxies = try! TrustedProxies(parsing: ["127.0.0.2", "10.0.0.0/8", "2001:db8::/32"])

    static func forwardedClient(_ headers: [String: String]) {
        guard let client = try? ForwardedClient.resolve(peer: "127.0.0.2", headers: headers, trusted: proxies) else { return }
        precondition(IPAddress(client) != nil, "a forwarded client that is not an address: \(client)")
    }

    static func connection(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let source = Source(Array(input.dropFirst()), chunk: 1 + Int(first % 32) * Int(first / 32 + 1))
        KeyServerFuzzing.wait {
            var reader = RequestReader(source: source, limits: limits)
            // At most as many requests as the input has bytes: each takes one at least.
            for _ in 0..<input.count {
                guard (try? await reader.waitForRequest()) == true else { return }
                do {
                    var request = try await reader.readHead()
                    forwardedClient(request.headers)
                    request.body = try await reader.readBody(of: request)
                    precondition(!request.method.isEmpty && !request.target.isEmpty, "a request without method or target")
                    precondition(request.method.utf8.count + request.target.utf8.count <= limits.requestLine, "a request line past its bound")
                    precondition(request.headers.count <= limits.headerCount, "more headers than the bound")
                    precondition(request.body.count <= limits.body, "a body past its bound")
                } catch let refusal as RequestRefusal {
                    precondition([400, 413, 414, 431, 501, 505].contains(refusal.status), "an unexpected refusal \(refusal.status)")
                    return  // a refused request ends its connection
                } catch {
                    return  // the input ended within a request
                }
            }
        }
    }
}
