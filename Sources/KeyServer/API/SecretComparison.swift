// SPDX-License-Identifier: GPL-3.0-or-later

/// API keys compared in time that does not depend on where they first differ: `==` on strings
/// stops at the first differing byte, which lets a client on the network find a key byte by byte
/// from response times. Both sides are compared over the longer length, so the time says nothing
/// about the key but its length.
enum SecretComparison {
    static func matches(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let a = Array(given.utf8)
        let b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
