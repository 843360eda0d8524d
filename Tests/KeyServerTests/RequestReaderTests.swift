// SPDX-License-Identifier: GPL-3.0-or-later

import KeyServer
import Synchronization
import Testing

/// `RequestReader` on bytes handed out a few at a time: what the fuzz target found, kept.
@Suite struct RequestReaderTests {
    final class Bytes: ByteSource {
        private let state: Mutex<[UInt8]>
        init(_ text: String) { state = Mutex(Array(text.utf8)) }
        func read(atMost count: Int) async throws -> [UInt8] {
            state.withLock { bytes in
                let taken = Array(bytes.prefix(min(count, 3)))
                bytes.removeFirst(taken.count)
                return taken
            }
        }
    }

    static func read(_ text: String) async throws -> ReadRequest {
        var reader = RequestReader(source: Bytes(text), limits: HTTPLimits())
        var request = try await reader.readHead()
        request.body = try await reader.readBody(of: request)
        return request
    }

    /// A chunk size with a sign was a negative read, a trap that stopped the server.
    @Test(arguments: ["-d", "+5", " -1", "0x5", "5 5"])
    func aChunkSizeIsHexDigitsOnly(_ size: String) async throws {
        await #expect(throws: RequestRefusal(status: 400, reason: "bad chunk")) {
            try await Self.read("POST /v1/publish HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabcde\r\n0\r\n\r\n")
        }
    }

    @Test func chunksWithExtensionsAndTrailersMakeTheBody() async throws {
        let request = try await Self.read(
            "POST /v1/publish HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nabcde\r\nA\r\n0123456789\r\n0\r\nT: 1\r\n\r\n")
        #expect(request.body == Array("abcde0123456789".utf8))
    }

    /// A request line with a control character or a byte past 0x7F (which would be decoded as
    /// U+FFFD and so grow past the line's bound) is refused.
    @Test(arguments: ["GET /a\u{7F} HTTP/1.1", "GET /\u{E9} HTTP/1.1", "GET /a\tb HTTP/1.1"])
    func aRequestLineIsVisibleASCII(_ line: String) async throws {
        await #expect(throws: RequestRefusal(status: 400, reason: "bad request line")) { try await Self.read(line + "\r\nHost: x\r\n\r\n") }
    }
}
