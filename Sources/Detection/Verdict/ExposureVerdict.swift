// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// An ENX classification a day reached: its index (1 is the most severe; ENX's 0 is "no
/// exposure" and is never stored here) and the authority's name for it.
package struct Classification: Hashable, Sendable, CustomStringConvertible {
    package var index: Int
    package var name: String

    package init(index: Int, name: String) {
        self.index = index
        self.name = name
    }

    package var description: String { "\(index) (\(name))" }
}

/// One UTC day the rule calls an exposure.
package struct ExposureDay: Hashable, Sendable {
    package var day: UTCDay
    /// The classification the day reached, under an ENX rule; `nil` under every other rule.
    package var classification: Classification?

    package init(day: UTCDay, classification: Classification? = nil) {
        self.day = day
        self.classification = classification
    }
}

/// The answer to "was I exposed, by my health authority's rule?": the one definition that
/// ExposureDays, LastExposureTime, ExposureDetected, the hook, `gaenctl detect` and the demo use.
package struct ExposureVerdict: Hashable, Sendable {
    /// Exposure days, oldest first.
    package var days: [ExposureDay]
    /// When the latest window that counted on an exposure day began; `nil` when none (or when the
    /// windows carry no time, as windows read from a file do).
    package var lastExposure: UnixTime?
    /// ENX's overall classification: the most severe any day reached, dated by the latest day that
    /// reached it (`DailySummaryRiskCalculator.classifyExposure`); `nil` under other rules or none.
    package var classification: (Classification, UTCDay)? {
        guard let best = days.compactMap(\.classification).min(by: { $0.index < $1.index }),
            let latest = days.last(where: { $0.classification?.index == best.index })
        else { return nil }
        return (best, latest.day)
    }

    package init(days: [ExposureDay] = [], lastExposure: UnixTime? = nil) {
        self.days = days
        self.lastExposure = lastExposure
    }

    package var exposed: Bool { !days.isEmpty }
    package var dayList: [UTCDay] { days.map(\.day) }
}
