// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Testing

@Suite struct HexTests {
    @Test func roundTrip() throws {
        let bytes: [UInt8] = [0x00, 0x7F, 0x80, 0xFF, 0x1A]
        #expect(Hex.encode(bytes) == "007f80ff1a")
        #expect(try Hex.decode("007F80ff1A") == bytes)
        #expect(try Hex.decode("") == [])
    }

    @Test(arguments: [
        ("abc", HexDecodingError.oddLength(digits: 3)),
        ("zz", .invalidCharacter("z", offset: 0)),
        ("0g", .invalidCharacter("g", offset: 1)),
        ("00 11", .oddLength(digits: 5)),
        ("0x00", .invalidCharacter("x", offset: 1)),
    ])
    func malformed(text: String, expected: HexDecodingError) {
        #expect(throws: expected) { try Hex.decode(text) }
    }

    @Test func exactLength() {
        #expect(throws: HexDecodingError.wrongLength(bytes: 2, expected: 16)) { try Hex.decode("0011", count: 16) }
        #expect(throws: HexDecodingError.wrongLength(bytes: 2, expected: 16)) { try Bytes16(hex: "0011") }
    }

    @Test func bytes16KeepsByteOrder() throws {
        let value = try Bytes16(hex: "000102030405060708090a0b0c0d0e0f")
        #expect(value.bytes == Array(0...15))
        #expect(value.hex == "000102030405060708090a0b0c0d0e0f")
        #expect(value != Bytes16.zero)
        #expect(Set([value, value, .zero]).count == 2)
    }
}
