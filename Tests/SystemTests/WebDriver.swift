// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import SystemCalls
import Testing

/// Debian's headless Chromium driven through chromedriver's W3C WebDriver HTTP API, with nothing
/// between them but JSON over loopback (no Selenium). chromedriver is started on a free port and
/// ended by its PID, Chromium with a profile in a directory of the test's.
final class WebDriver {
    static var chromedriver: String? { executable("GAEND_CHROMEDRIVER", "/usr/bin/chromedriver") }
    static var chromium: String? { executable("GAEND_CHROMIUM", "/usr/bin/chromium") }
    static let unavailable = "no chromium and chromium-driver: install them or set GAEND_CHROMEDRIVER (make check does)"

    static func executable(_ variable: String, _ debian: String) -> String? {
        if let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty { return path }
        return FileManager.default.isExecutableFile(atPath: debian) ? debian : nil
    }

    let process = Process()
    let port: Int
    let transport = CurlTransport()
    private(set) var session = ""

    /// A browser window of `width` × `height` CSS pixels.
    init(width: Int, height: Int, profile: String) async throws {
        guard let driver = Self.chromedriver, let chromium = Self.chromium else { throw ToolRunnerError(message: Self.unavailable) }
        port = try LoopbackPort.free()
        process.executableURL = URL(fileURLWithPath: driver)
        process.arguments = ["--port=\(port)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let port = port
        try await eventually("chromedriver on \(port)") { LoopbackPort.accepts(port) }
        // As root Chromium needs --no-sandbox; a container's small /dev/shm needs the other.
        let created = try await send(
            "POST", "/session",
            [
                "capabilities": [
                    "alwaysMatch": [
                        "browserName": "chrome",
                        "goog:chromeOptions": [
                            "binary": chromium,
                            "args": [
                                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=\(width),\(height)",
                                "--user-data-dir=\(profile)", "--lang=en-GB",
                            ],
                        ],
                    ]
                ]
            ])
        session = try #require((created as? [String: Any])?["sessionId"] as? String, "no session: \(String(describing: created))")
        try await resize(width: width, height: height)
    }

    /// Ends chromedriver and what it started (Chromium and its helpers): a test that failed
    /// before `quit` leaves no browser behind.
    deinit { ProcessTree.end(process) }

    func quit() async {
        _ = try? await send("DELETE", "/session/\(session)", nil)
    }

    /// One command: the `value` of its answer; a WebDriver error is thrown with its message.
    @discardableResult
    func send(_ method: String, _ path: String, _ body: Any?) async throws -> Any? {
        let bytes = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        let response = try await transport.send(
            HTTPRequest(
                method: method, url: "http://127.0.0.1:\(port)\(path)", headers: [("Content-Type", "application/json")], body: bytes,
                timeout: .seconds(60), maximumResponseBytes: 32 << 20))
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let value = object?["value"]
        if response.status >= 400 {
            let error = value as? [String: Any]
            throw ToolRunnerError(message: "WebDriver \(method) \(path): \(error?["error"] ?? response.status): \(error?["message"] ?? "")")
        }
        return value
    }

    func open(_ url: String) async throws { try await send("POST", "/session/\(session)/url", ["url": url]) }

    func resize(width: Int, height: Int) async throws {
        try await send("POST", "/session/\(session)/window/rect", ["width": width, "height": height])
    }

    /// Runs `script` in the page (its `return` is the result).
    @discardableResult
    func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await send("POST", "/session/\(session)/execute/sync", ["script": script, "args": arguments])
    }

    /// The visible text of the element `selector` finds, or nil when there is none.
    func text(_ selector: String) async throws -> String? {
        try await run("const e = document.querySelector(arguments[0]); return e ? e.innerText : null;", [selector]) as? String
    }

    func element(_ selector: String) async throws -> String {
        let found = try await send("POST", "/session/\(session)/element", ["using": "css selector", "value": selector])
        return try #require((found as? [String: Any])?["element-6066-11e4-a52e-4f735466cecf"] as? String, "no element \(selector)")
    }

    /// Clicks as a user would (the element scrolled into view first).
    func click(_ selector: String) async throws {
        try await send("POST", "/session/\(session)/element/\(try await element(selector))/click", [String: Any]())
    }

    func type(_ selector: String, _ text: String) async throws {
        try await send("POST", "/session/\(session)/element/\(try await element(selector))/value", ["text": text])
    }

    /// Waits (bounded) until `selector`'s text satisfies `condition`; returns it.
    @discardableResult
    func waitForText(_ selector: String, within bound: Duration = .seconds(30), _ condition: @escaping (String) -> Bool) async throws -> String {
        var last: String?
        try await eventually("\(selector) to read as expected", within: bound, explain: { "it reads: \(last ?? "(no element)")" }) {
            last = try await self.text(selector)
            return last.map(condition) ?? false
        }
        return last ?? ""
    }

    /// The viewport as a PNG, written to `path`.
    func screenshot(to path: String) async throws {
        let encoded = try #require(try await send("GET", "/session/\(session)/screenshot", nil) as? String)
        try #require(Data(base64Encoded: encoded)).write(to: URL(fileURLWithPath: path))
    }
}
