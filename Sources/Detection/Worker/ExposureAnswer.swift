// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The wearer's question, answered: was I exposed in the last 14 days, on which days, and when
/// did the latest exposure begin. Manager1's ExposureDays and LastExposureTime.
package struct ExposureAnswer: Hashable, Sendable {
    /// UTC days with an exposure that scores, oldest first.
    package var days: [UTCDay]
    package var lastExposure: UnixTime?

    package init(days: [UTCDay] = [], lastExposure: UnixTime? = nil) {
        self.days = days
        self.lastExposure = lastExposure
    }
}
