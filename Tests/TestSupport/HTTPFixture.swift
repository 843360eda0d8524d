// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Glibc

/// A real HTTP server on loopback (testbed/http_fixture.py) that a test scripts route by route. It
/// is ended by its PID when the value goes away.
package final class HTTPFixture: @unchecked Sendable {
    // @unchecked: `process` is set in init and only read after.
    private let process: Process
    package let port: Int

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    package init() throws {
        var script = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { script.deleteLastPathComponent() }  // Tests/TestSupport/HTTPFixture.swift → root
        script.appendPathComponent("testbed/http_fixture.py")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = output.firstLine()
        guard text.hasPrefix("port "), let port = Int(text.dropFirst(5).prefix { $0.isNumber }) else {
            process.terminate()
            throw ToolRunnerError(message: "the HTTP fixture did not start: '\(text)'")
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitForExit()
    }

    /// How one path answers.
    package struct Route: Sendable {
        package var status = 200
        package var body: [UInt8] = []
        package var headers: [String: String] = [:]
        package var delaySeconds = 0.0
        package var truncate = false
        package var repeatBody = 1
        package var failTimes = 0
        /// Requests wait for `release(_:)` (at most 120 s) before they are answered.
        package var held = false
        /// The body sent a byte every this many seconds (chunked); 0: at once.
        package var trickleSeconds = 0.0

        package init(
            status: Int = 200, body: [UInt8] = [], headers: [String: String] = [:], delaySeconds: Double = 0, truncate: Bool = false,
            repeatBody: Int = 1, failTimes: Int = 0, held: Bool = false, trickleSeconds: Double = 0
        ) {
            self.trickleSeconds = trickleSeconds
            self.status = status
            self.body = body
            self.headers = headers
            self.delaySeconds = delaySeconds
            self.truncate = truncate
            self.repeatBody = repeatBody
            self.failTimes = failTimes
            self.held = held
        }

        package static func text(_ text: String, status: Int = 200) -> Route {
            Route(status: status, body: Array(text.utf8), headers: ["Content-Type": "text/plain"])
        }

        package static func json(_ text: String, status: Int = 200) -> Route {
            Route(status: status, body: Array(text.utf8), headers: ["Content-Type": "application/json"])
        }
    }

    /// Sets (or replaces) the answers of some paths.
    package func set(_ routes: [String: Route]) async throws {
        var object = [String: Any]()
        for (path, route) in routes {
            object[path] = [
                "status": route.status, "body_b64": Data(route.body).base64EncodedString(), "headers": route.headers,
                "delay": route.delaySeconds, "truncate": route.truncate, "repeat_body": route.repeatBody, "fail_times": route.failTimes,
                "held": route.held, "trickle": route.trickleSeconds,
            ]
        }
        _ = try await call("/_control/routes", body: try JSONSerialization.data(withJSONObject: object))
    }

    /// Lets the held requests of `path` (and any later ones) be answered.
    package func release(_ path: String) async throws {
        _ = try await call("/_control/release", body: try JSONSerialization.data(withJSONObject: ["path": path]))
    }

    /// A request the server received.
    package struct Request: Sendable {
        package var method: String
        package var path: String
        /// Header names in lowercase.
        package var headers: [String: String]
        package var body: Data
    }

    /// Every request received, oldest first (control calls excluded).
    package func requests() async throws -> [Request] {
        let data = try await call("/_requests", body: nil)
        let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
        return list.map {
            Request(
                method: $0["method"] as? String ?? "", path: $0["path"] as? String ?? "",
                headers: ($0["headers"] as? [String: String]) ?? [:],
                body: Data(base64Encoded: $0["body"] as? String ?? "") ?? Data())
        }
    }

    private func call(_ path: String, body: Data?) async throws -> Data {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = body == nil ? "GET" : "POST"
        request.httpBody = body
        let (data, _) = try await URLSession.shared.data(for: request)
        return data
    }
}
