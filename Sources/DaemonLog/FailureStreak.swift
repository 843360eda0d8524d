// SPDX-License-Identifier: GPL-3.0-or-later

package import Logging

/// A failure that repeats while something is down (the controller unreachable, the system bus
/// gone): warned once when it starts, counted at debug level while it lasts, and its end told
/// with the count, instead of one warning every 30 s for as long as it lasts.
package struct FailureStreak {
    package private(set) var failures = 0

    package init() {}

    package mutating func failed(_ message: Logger.Message, metadata: Logger.Metadata, logger: Logger) {
        failures += 1
        if failures == 1 {
            logger.warning(message, metadata: metadata)
        } else {
            logger.debug(message, metadata: metadata.merging(["attempt": "\(failures)"]) { _, new in new })
        }
    }

    /// Tells the end of a streak, if there was one.
    package mutating func recovered(_ message: Logger.Message, logger: Logger) {
        guard failures > 0 else { return }
        logger.notice(message, metadata: ["failedAttempts": "\(failures)"])
        failures = 0
    }
}
