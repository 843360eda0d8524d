// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore

/// What gaend reads to judge and keep time: the held-sightings file it reads back at start
/// (first byte 0), and a server's `Date` header, a witness to the clock (1).
enum ClockFuzzing {
    @Sendable static func input(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        if first % 2 == 0 {
            guard let contents = try? HeldFormat.decode(rest) else { return }
            // What the daemon does with them: re-timed by an offset.
            _ = contents.entries.reduce(0) { $0 + $1.aggregates.count }
        } else if let time = HTTPDate.parse(String(decoding: rest, as: UTF8.self)) {
            // What parses formats back to itself.
            guard HTTPDate.parse(HTTPDate.format(time)) == time else { fatalError("HTTPDate does not round-trip \(time)") }
        }
    }
}
