// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Where a connection's bytes come from: gaen-keyserver's socket, or a fuzzer's input cut into reads.
package protocol ByteSource: Sendable {
    /// Up to `count` bytes, at least one; none when the peer has closed.
    func read(atMost count: Int) async throws -> [UInt8]
}

/// The peer closed the connection before a request was complete.
package struct ConnectionClosed: Error, Equatable {}

/// The bounds a connection's requests are read within (docs/keyserver.md, "Bounds on the network").
package struct HTTPLimits: Sendable {
    /// The request line, method, target and version, without its CRLF: past it 414.
    package var requestLine = 8_192
    /// All header lines together (and a chunked body's trailers): past it 431.
    package var headerBytes = 16_384
    /// Header lines: past it 431.
    package var headerCount = 100
    /// A body, with Content-Length or chunked: past it 413 (the API's own limit).
    package var body = PublishRequest.maximumBodyBytes
    /// Connections open at once: past it the new one is answered 503 and closed.
    package var connections = 512
    /// Connections one client (an IPv4 address, an IPv6 /64, as the rate limits count) may hold
    /// at once: past it its new one is answered 503 and closed, so that one address cannot take
    /// every connection (issue 47). Trusted proxies are not counted: theirs carry many clients.
    package var connectionsPerClient = 32
    /// Seconds a new connection may wait before its first request's first byte.
    package var firstByteTimeout: Double = 5
    /// Seconds a kept-alive connection may wait for its next request's first byte.
    package var idleTimeout: Double = 30
    /// Seconds from a request's first byte to the end of its body (slow senders).
    package var requestTimeout: Double = 15
    /// Seconds to write a response.
    package var writeTimeout: Double = 15

    package init() {}
}

/// A request refused while it was read: its status, and the connection is closed after it.
package struct RequestRefusal: Error, Equatable {
    package let status: Int
    package let reason: String

    package init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// One request as read off the connection.
package struct ReadRequest: Sendable {
    package var method: String
    package var target: String
    package var version: String
    /// Lowercased names; a repeated header's values joined with ", ".
    package var headers: [String: String]
    package var body: [UInt8]

    package var keepAlive: Bool {
        let connection = headers["connection"]?.lowercased() ?? ""
        return version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
    }
}

/// Reads requests off a connection with every part bounded; never buffers more than a line's or
/// a body's limit plus one read.
package struct RequestReader<Source: ByteSource> {
    let source: Source
    package let limits: HTTPLimits
    private var buffer: [UInt8] = []
    private var start = 0

    package init(source: Source, limits: HTTPLimits) {
        self.source = source
        self.limits = limits
    }

    package var hasBufferedBytes: Bool { start < buffer.count }

    /// Waits for the next request's first byte; false when the peer closed.
    package mutating func waitForRequest() async throws -> Bool {
        if hasBufferedBytes { return true }
        do { try await fill() } catch { return false }
        return true
    }

    package mutating func readHead() async throws -> ReadRequest {
        var line = try await readLine(limit: limits.requestLine, refusal: RequestRefusal(status: 414, reason: "request line too long"))
        var blank = 0
        while line.isEmpty {  // RFC 9112 2.2: empty lines before a request line are ignored, a few
            blank += 1
            guard blank <= 4 else { throw RequestRefusal(status: 400, reason: "no request line") }
            line = try await readLine(limit: limits.requestLine, refusal: RequestRefusal(status: 414, reason: "request line too long"))
        }
        // RFC 9112 3: a request line is visible ASCII and spaces; anything else (a control
        // character, a byte past 0x7F that would be decoded as U+FFFD) is no request of ours.
        guard line.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { throw RequestRefusal(status: 400, reason: "bad request line") }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw RequestRefusal(status: 400, reason: "bad request line") }
        let version = String(parts[2])
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { throw RequestRefusal(status: 505, reason: "HTTP version not supported") }
        let headers = try await readFields()
        return ReadRequest(method: String(parts[0]), target: String(parts[1]), version: version, headers: headers, body: [])
    }

    /// Header fields (or trailers) up to the empty line, within headerBytes and headerCount.
    private mutating func readFields() async throws -> [String: String] {
        var headers = [String: String]()
        var bytes = 0
        var count = 0
        let tooLarge = RequestRefusal(status: 431, reason: "request header fields too large")
        while true {
            let line = try await readLine(limit: max(0, limits.headerBytes - bytes), refusal: tooLarge)
            if line.isEmpty { return headers }
            bytes += line.utf8.count + 2
            count += 1
            guard count <= limits.headerCount else { throw tooLarge }
            guard let colon = line.firstIndex(of: ":"), line.first != " ", line.first != "\t" else {
                throw RequestRefusal(status: 400, reason: "bad header line")
            }
            let name = line[..<colon]
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { throw RequestRefusal(status: 400, reason: "bad header name") }
            let key = name.lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: [" ", "\t"])
            if let old = headers[key] {
                guard key != "content-length" || old == value else { throw RequestRefusal(status: 400, reason: "conflicting Content-Length") }
                if key != "content-length" { headers[key] = old + ", " + value }
            } else {
                headers[key] = value
            }
        }
    }

    /// The body the head announces, within limits.body.
    package mutating func readBody(of request: ReadRequest) async throws -> [UInt8] {
        let length = request.headers["content-length"]
        if let encoding = request.headers["transfer-encoding"] {
            guard length == nil else { throw RequestRefusal(status: 400, reason: "both Content-Length and Transfer-Encoding") }
            guard encoding.lowercased() == "chunked" else { throw RequestRefusal(status: 501, reason: "unsupported Transfer-Encoding") }
            return try await readChunked()
        }
        guard let length else { return [] }
        guard !length.isEmpty, length.utf8.count <= 18, length.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let count = Int(length) else {
            throw RequestRefusal(status: 400, reason: "bad Content-Length")
        }
        guard count <= limits.body else { throw RequestRefusal(status: 413, reason: "body too large") }
        return try await readBytes(count)
    }

    private mutating func readChunked() async throws -> [UInt8] {
        var body = [UInt8]()
        let bad = RequestRefusal(status: 400, reason: "bad chunk")
        while true {
            let line = try await readLine(limit: 1_024, refusal: bad)
            let sizeText = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: [" ", "\t"])
            // Hex digits only: Int(_:radix:) also takes a sign, and a chunk of "-d" bytes would
            // be a negative read (a trap; found by the http-request fuzz target).
            guard !sizeText.isEmpty, sizeText.utf8.count <= 8, sizeText.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }),
                let size = Int(sizeText, radix: 16)
            else { throw bad }
            if size == 0 {
                _ = try await readFields()  // trailers, bounded like headers, ignored
                return body
            }
            guard body.count + size <= limits.body else { throw RequestRefusal(status: 413, reason: "body too large") }
            body += try await readBytes(size)
            guard try await readLine(limit: 0, refusal: bad).isEmpty else { throw bad }
        }
    }

    private mutating func readBytes(_ count: Int) async throws -> [UInt8] {
        while buffer.count - start < count { try await fill() }
        let bytes = Array(buffer[start..<start + count])
        start += count
        return bytes
    }

    /// A line without its LF (and CR); more than `limit` bytes before the LF: `refusal`.
    private mutating func readLine(limit: Int, refusal: RequestRefusal) async throws -> String {
        var scanned = 0  // bytes after start known to hold no LF (fill may move start)
        while true {
            if let end = buffer[(start + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                var last = end
                if last > start, buffer[last - 1] == UInt8(ascii: "\r") { last -= 1 }
                guard last - start <= limit else { throw refusal }
                let line = String(decoding: buffer[start..<last], as: UTF8.self)
                start = end + 1
                return line
            }
            guard buffer.count - start <= limit + 1 else { throw refusal }  // + 1: a CR
            scanned = buffer.count - start
            try await fill()
        }
    }

    private mutating func fill() async throws {
        if start > 0, start == buffer.count || start > 65_536 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        let bytes = try await source.read(atMost: 16_384)
        guard !bytes.isEmpty else { throw ConnectionClosed() }
        buffer += bytes
    }
}
