// SPDX-License-Identifier: GPL-3.0-or-later

import Daemon
import KeyFiles
import Testing

/// What the person sharing is told when sharing fails: a server that could not be reached is not
/// one that refused their code (they would try another code, or give up).
@Suite struct ShareErrorTests {
    @Test func anUnreachableServerIsNotARefusal() {
        let refused = ClientError.server(url: "https://v.example/api/verify", status: 400, code: "code_invalid", message: "verification code is invalid")
        #expect(
            Manager.explain(refused, server: "the verification server", refused: "the code")
                == "the verification server refused the code: code_invalid (verification code is invalid)")
        let down = ClientError.http(.transport(url: "https://v.example/api/verify", reason: "Could not connect to the server"))
        #expect(
            Manager.explain(down, server: "the verification server", refused: "the code")
                == "the verification server is unreachable: https://v.example/api/verify: Could not connect to the server")
        let slow = ClientError.http(.timedOut(url: "https://k.example/v1/publish", after: .seconds(30)))
        #expect(Manager.explain(slow, server: "the key server", refused: "the keys").hasPrefix("the key server is unreachable: "))
        let large = ClientError.http(.responseTooLarge(url: "https://k.example/v1/publish", limit: 65_536))
        #expect(Manager.explain(large, server: "the key server", refused: "the keys").hasPrefix("the key server refused the keys: "))
    }

    /// Issue 53: a server's code and words are its bytes, escaped before they reach an error, and
    /// the key server's own words say why it refused.
    @Test func aServersWordsAreShownEscaped() {
        let hostile = ClientError.server(
            url: "https://k.example/v1/publish", status: 400, code: "bad_request\u{1B}[2J\u{1B}[H", message: "too many keys\u{9B}31mof one start")
        let text = Manager.explain(hostile, server: "the key server", refused: "the keys")
        #expect(text == "the key server refused the keys: bad_request\\u001b[2J\\u001b[H (too many keys\\u009b31mof one start)")
        #expect("\(hostile)" == "https://k.example/v1/publish: HTTP 400 (bad_request\\u001b[2J\\u001b[H: too many keys\\u009b31mof one start)")
    }
}
