// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import Foundation
import KeyFiles

/// gaend's HTTP clients (VerificationClient, PublishClient) over a `RawConnection` from a chosen
/// source address: one connection per request, on a dispatch queue so that the blocking socket
/// never holds a thread of the concurrency pool.
struct RawTransport: HTTPTransport {
    let port: Int
    let source: String

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let url = URL(string: request.url) else { throw .badURL(request.url) }
        let path = url.path.isEmpty ? "/" : url.path
        var head = "\(request.method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(request.body.count)\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + request.body
        let (port, source) = (port, source)
        let answer: HTTPResponse? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let response = (try? RawConnection(to: port, from: source)).flatMap { connection in
                    connection.send(bytes) ? connection.readResponse() : nil
                }
                continuation.resume(returning: response.map { HTTPResponse(status: $0.status, headers: $0.headers, body: $0.body) })
            }
        }
        guard let answer else { throw .transport(url: request.url, reason: "no response from \(source)") }
        return answer
    }
}
