// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import Foundation

/// One JSON POST to a verification or key server: headers, random padding, size caps, and errors
/// named by the server's own `code`/`errorCode`.
struct JSONExchange: Sendable {
    var transport: any HTTPTransport
    var timeout: Duration
    static let maximumResponseBytes = 256 * 1024

    /// POSTs `body` (plus `padding`) to `url`; returns the decoded JSON object of a 2xx answer.
    func post(
        _ url: String, body: [String: Any], headers: [(String, String)] = [], chaff: Bool = false
    ) async throws(ClientError) -> [String: Any] {
        var body = body
        body["padding"] = Self.padding()
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        } catch {
            throw .local("encoding the request to \(url): \(error)")
        }
        var allHeaders = [("Content-Type", "application/json"), ("Accept", "application/json")] + headers
        if chaff { allHeaders.append(("X-Chaff", "1")) }
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(
                    method: "POST", url: url, headers: allHeaders, body: [UInt8](data), timeout: timeout,
                    maximumResponseBytes: Self.maximumResponseBytes))
        } catch {
            throw .http(error)
        }
        if (300..<400).contains(response.status) {
            throw .redirected(url: url, status: response.status, location: response.headers["location"])
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard (200..<300).contains(response.status) else {
            let code = (object?["code"] as? String) ?? (object?["errorCode"] as? String)
            throw .server(url: url, status: response.status, code: code?.isEmpty == false ? code : nil, message: object?["error"] as? String)
        }
        guard let object else { throw .unexpectedResponse(url: url, reason: "the body is not a JSON object") }
        // Some servers answer 200 with an error in the body.
        if let code = (object["code"] as? String) ?? (object["errorCode"] as? String), !code.isEmpty, code != "partial_failure" {
            throw .server(url: url, status: response.status, code: code, message: object["error"] as? String)
        }
        return object
    }

    /// 1–2 KB of random base64, so that request sizes say nothing about their content.
    static func padding() -> String {
        let count = 1024 + Int.random(in: 0..<1024)
        var bytes = [UInt8](repeating: 0, count: count * 3 / 4)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        return Data(bytes).base64EncodedString()
    }
}
