// SPDX-License-Identifier: GPL-3.0-or-later

/// The waits between attempts at something that keeps failing (reaching the controller or the
/// bus, re-initializing after a fault): 1 s, then doubling up to 30 s, back to 1 s once it works.
/// One rule for every radio back end, so a controller and bluetoothd are retried alike.
package struct Backoff: Sendable {
    package static let first = Duration.seconds(1)
    package static let longest = Duration.seconds(30)

    /// The wait the next failure gets.
    package private(set) var delay = Backoff.first

    package init() {}

    /// The wait after a failure; the one after it doubles.
    package mutating func next() -> Duration {
        defer { delay = min(delay * 2, Self.longest) }
        return delay
    }

    /// Success: the next failure waits 1 s again.
    package mutating func reset() { delay = Self.first }
}
