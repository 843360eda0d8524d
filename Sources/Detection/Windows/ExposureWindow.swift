// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import KeyFiles

/// One scan's worth of sightings of a key (Google's and Apple's `ScanInstance`).
package struct ScanInstance: Hashable, Sendable, Codable {
    /// The rounded mean attenuation over the instance's reports, dB.
    package var typicalAttenuation: Int
    /// The lowest attenuation (strongest signal) in the instance, dB.
    package var minimumAttenuation: Int
    /// Time since the previous scan ended, in whole minutes as Google counts it: 0…300, 120 if unknown.
    package var secondsSinceLastScan: Int

    package init(typicalAttenuation: Int, minimumAttenuation: Int, secondsSinceLastScan: Int) {
        self.typicalAttenuation = typicalAttenuation
        self.minimumAttenuation = minimumAttenuation
        self.secondsSinceLastScan = secondsSinceLastScan
    }
}

/// Up to 30 minutes of sightings of one diagnosis key (Apple's `ENExposureWindow`). Carries no key
/// and no identifier: windows are what may be kept and shown.
package struct ExposureWindow: Hashable, Sendable {
    /// The UTC day the window started.
    package var day: UTCDay
    /// When its first sighting was (GMS's `epoch_seconds`); `nil` for windows kept by earlier
    /// versions, which stored the day alone. Not part of the API's JSON, which has the day only.
    package var start: UnixTime?
    /// When its key was matched (the stored result's `matched_at`); `nil` for windows read from a
    /// file or kept by earlier versions. Rules that judge a day when its windows arrive (DP-3T's 10
    /// days) judge it against this time.
    package var matchedAt: UnixTime?
    /// The report type, with the configured value in place of a missing one (`.unknown` if none).
    package var reportType: ReportType
    package var infectiousness: Infectiousness
    package var calibrationConfidence: CalibrationConfidence
    /// The key's transmission risk level (kept for v1 scoring).
    package var transmissionRiskLevel: Int
    package var scanInstances: [ScanInstance]

    package init(
        day: UTCDay, start: UnixTime? = nil, matchedAt: UnixTime? = nil, reportType: ReportType, infectiousness: Infectiousness,
        calibrationConfidence: CalibrationConfidence, transmissionRiskLevel: Int, scanInstances: [ScanInstance]
    ) {
        self.day = day
        self.start = start
        self.matchedAt = matchedAt
        self.reportType = reportType
        self.infectiousness = infectiousness
        self.calibrationConfidence = calibrationConfidence
        self.transmissionRiskLevel = transmissionRiskLevel
        self.scanInstances = scanInstances
    }
}
