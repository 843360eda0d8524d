// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
package import ENCore
package import KeyFiles

/// What is kept of one matched diagnosis key between runs: GMS's `ExposureResult`, one per TEK
/// (storage/ExposureResultStorage.java). It holds the key's sightings rather than finished
/// windows, so that windows, daily summaries and v1 exposures are built again from it under any
/// configuration, and a revision of the key's report type rescores them.
///
/// The key data is kept: it is how a later file's copy or revision of the key is recognised. It
/// was published by the health authority, and the sightings' RPIs and metadata follow from it, so
/// the file holds nothing the contact log and the key server do not already hold.
package struct ExposureResult: Hashable, Sendable {
    /// The key with its report type as matched, or as revised since.
    package var match: KeyMatch
    /// How many times a revision changed the report type (GMS allows one).
    package var reportTypeTransitions: Int
    /// When the key was matched.
    package var matchedAt: UnixTime

    package init(match: KeyMatch, reportTypeTransitions: Int = 0, matchedAt: UnixTime) {
        self.match = match
        self.reportTypeTransitions = reportTypeTransitions
        self.matchedAt = matchedAt
    }

    /// Revisions GMS allows per key (`ContactTracingFeature.allowedReportTypeTransitions`).
    package static let allowedTransitions = 1

    /// GMS's `ExposureMatchingTracer.isValidTransition`: a self-report may become confirmed
    /// (test or clinical) or revoked; a clinical diagnosis may become a confirmed test or revoked;
    /// nothing else changes, a confirmed test included.
    package static func isValidTransition(from old: ReportType, to new: ReportType) -> Bool {
        switch old {
        case .selfReport: return [.confirmedTest, .confirmedClinicalDiagnosis, .revoked].contains(new)
        case .confirmedClinicalDiagnosis: return [.confirmedTest, .revoked].contains(new)
        default: return false
        }
    }

    /// Applies a later file's report type for this key, as GMS's `storeValidReportTransition`:
    /// both types are read as windows read them (`reportTypeWhenMissing` in place of UNKNOWN), and
    /// the change is kept only on a valid transition while transitions remain.
    ///
    /// - Returns: whether the result changed.
    package mutating func revise(to published: ReportType, configuration: V2Configuration) -> Bool {
        let old = WindowBuilder.mappedReportType(match.key.reportType, configuration: configuration)
        let new = WindowBuilder.mappedReportType(published, configuration: configuration)
        guard reportTypeTransitions < Self.allowedTransitions, Self.isValidTransition(from: old, to: new) else { return false }
        match.key.reportType = new
        reportTypeTransitions += 1
        return true
    }

    /// The UTC day of the newest sighting: the result ages out 14 days after it.
    package var lastDay: UTCDay {
        UTCDay(containing: match.sightings.map(\.aggregate.firstSeen).max() ?? matchedAt)
    }
}
