// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Testing

@Suite struct DigestTests {
    /// RFC 4231 test case 2 (a key shorter than the block), for both HMACs the servers use.
    @Test func hmacsMatchRFC4231() {
        let key = Array("Jefe".utf8)
        let message = Array("what do ya want for nothing?".utf8)
        #expect(Hex.encode(Digest.hmacSHA256(key: key, message: message)) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            Hex.encode(Digest.hmacSHA512(key: key, message: message))
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
    }
}
