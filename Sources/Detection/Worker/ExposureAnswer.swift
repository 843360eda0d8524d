// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The wearer's question, answered: was I exposed in the last 14 days, on which days, and when
/// did the latest exposure begin. Manager1's ExposureDays and LastExposureTime.
package struct ExposureAnswer: Hashable, Sendable {
    /// UTC days with an exposure that scores, oldest first.
    package var days: [UTCDay]
    package var lastExposure: UnixTime?
    /// ENX's classification, when the configuration classifies: the most severe any day reached.
    package var classification: Classification?

    package init(days: [UTCDay] = [], lastExposure: UnixTime? = nil, classification: Classification? = nil) {
        self.days = days
        self.lastExposure = lastExposure
        self.classification = classification
    }

    package init(_ verdict: ExposureVerdict) {
        self.init(days: verdict.dayList, lastExposure: verdict.lastExposure, classification: verdict.classification?.0)
    }
}
