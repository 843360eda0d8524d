// SPDX-License-Identifier: GPL-3.0-or-later

import Logging

/// One line per request, at info level under `gaen-keyserver.access`: the client, the method and
/// path, the status, the bytes of the body sent and the time taken. Never a query string, a header
/// or a body: codes, tokens, API keys and keys travel there.
struct AccessLog: Sendable {
    struct Line: Sendable, Equatable {
        var client: String
        var method = "-"
        var target = "-"
        var status = 0
        var bytes = 0
        var milliseconds = 0.0
    }

    let logger: Logger

    init(logger: Logger = Logger(label: "gaen-keyserver.access")) { self.logger = logger }

    func write(_ line: Line) { logger.info("\(Self.format(line))") }

    func refusedConnection(from client: ClientAddress, reason: String) {
        logger.notice("\(client.text) refused: \(reason) (503)")
    }

    /// `127.0.0.1 "POST /api/verify" 400 211 1.3ms`
    static func format(_ line: Line) -> String {
        let rounded = (line.milliseconds * 10).rounded() / 10
        return "\(line.client) \"\(printable(line.method, limit: 16)) \(printable(path(line.target), limit: 200))\" \(line.status) \(line.bytes) \(rounded)ms"
    }

    /// The target without its query (`?…` may carry anything) and fragment.
    static func path(_ target: String) -> String { String(target.prefix { $0 != "?" && $0 != "#" }) }

    /// What a client sent, safe to put in a log line: printable ASCII only, others and quotes and
    /// backslashes as \xNN, at most `limit` bytes (then "…"), so no line can be forged or flooded.
    static func printable(_ text: String, limit: Int) -> String {
        var out = ""
        for byte in text.utf8.prefix(limit) {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text.utf8.count > limit ? out + "…" : out
    }
}
