// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Foundation

/// The reference server's rules for publishing (docs/getting-started/publishing-temporary-exposure-keys.md,
/// internal/publish/config.go, docs/tek_validation.md): what is refused outright, what is dropped
/// with a warning (a partial failure), and when each accepted key may be exported.
package struct PublishValidator: Sendable {
    package var maximumKeys = 30
    package var maximumSameStartKeys = 3
    /// How old a key's start may be: 360 hours.
    package var maximumIntervalAge = 360 * 6
    /// |days since symptom onset| allowed (tightened from 21 to 14 in the reference server).
    package var maximumSymptomOnsetDays = 14
    /// How long a key waits before export after its publication, or after its end and its UTC
    /// day's when it is still valid (Apple asks ≥ 2 h; the reference's MIN_WINDOW_AGE is 2 h).
    package var embargoDelay: Int64 = 2 * 3600
    /// The delays an administrator may choose: none to the 14 days keys are kept (an option past
    /// Int64 milliseconds would trap on the first still-valid key).
    package static let embargoDelays: ClosedRange<Int64> = 0...14 * 86_400
    /// For demos and tests only: every key is exported at once, the embargo lifted (the reference
    /// server's DEBUG_RELEASE_SAME_DAY_KEYS), so a key shared today can be matched today.
    package var releaseSameDayKeys = false

    package init() {}

    /// A key that passed: its bytes, interval, and the earliest time it may be exported.
    package struct AcceptedKey: Sendable, Equatable {
        package var key: TemporaryExposureKey
        package var transmissionRisk: Int32
        package var daysSinceOnsetOfSymptoms: Int32?
        package var exportAfter: UnixTime

        package init(key: TemporaryExposureKey, transmissionRisk: Int32, daysSinceOnsetOfSymptoms: Int32?, exportAfter: UnixTime) {
            self.key = key
            self.transmissionRisk = transmissionRisk
            self.daysSinceOnsetOfSymptoms = daysSinceOnsetOfSymptoms
            self.exportAfter = exportAfter
        }
    }

    package struct Outcome: Sendable, Equatable {
        package var accepted: [AcceptedKey]
        /// One line per dropped key, naming it by index and saying why.
        package var warnings: [String]
        /// How many of them were bad keys (not ones too far from the symptom onset).
        package var keyErrors: Int
        /// Some keys were bad: the reference's `partial_failure`. A key dropped for its distance
        /// from the symptom onset is a warning only.
        package var partialFailure: Bool { keyErrors > 0 }
    }

    /// Report types as export files carry them (export.proto's ReportType).
    package enum ReportType {
        package static let confirmed: Int32 = 1
        package static let likely: Int32 = 2
        package static let selfReport: Int32 = 3
        package static let revoked: Int32 = 5
    }

    /// The transmission risk a key of `reportType` gets when it was sent without one (0), as the
    /// reference's `ReportTypeTransmissionRisk` (internal/publish/model/exposure_model.go):
    /// confirmed 2, likely 4, negative 6; a self-report keeps 0 (the reference has no case for it).
    package static func transmissionRisk(_ provided: Int32, reportType: Int32) -> Int32 {
        guard provided == 0 else { return provided }
        switch reportType {
        case ReportType.confirmed: return 2
        case ReportType.likely: return 4
        case ReportType.revoked: return 6
        default: return 0
        }
    }

    /// How old a symptom onset the request or the certificate may give: 28 days (the reference's
    /// MAX_VALID_SYMPTOM_ONSET_REPORT_DAYS); older or in the future, the default is taken.
    package var maximumSymptomOnsetReportDays: Int64 = 28
    /// The onset taken when neither gives a usable one: 4 days ago (DEFAULT_SYMPTOM_ONSET_DAYS_AGO).
    package var defaultSymptomOnsetDaysAgo: Int64 = 4

    /// The symptom onset interval a publish uses, as the reference's `TransformPublish`: the
    /// request's when it is before now and no older than 28 days (from that day's UTC midnight),
    /// else the certificate's under the same condition, else 4 days before now.
    func symptomOnset(request: Int64?, certificate: Int64?, current: Int64, now: UnixTime) -> Int64 {
        let oldest = UTCDay(containing: now.adding(seconds: -maximumSymptomOnsetReportDays * 86_400)).start.seconds / ENIntervalNumber.seconds
        for candidate in [request, certificate] {
            if let candidate, candidate > 0, candidate < current, candidate >= oldest { return candidate }
        }
        return now.adding(seconds: -defaultSymptomOnsetDaysAgo * 86_400).seconds / ENIntervalNumber.seconds
    }

    /// Applies the rules to `request`. `reportType` (the certificate's) fills in transmission risks
    /// of 0; `certificateOnset` is the certificate's symptom onset, used when the request has none
    /// that is usable.
    package func validate(
        _ request: PublishRequest, reportType: Int32 = ReportType.confirmed, certificateOnset: Int64? = nil, now: UnixTime
    ) throws(PublishError) -> Outcome {
        guard !request.keys.isEmpty else { throw PublishError(.badRequest, "temporaryExposureKeys is empty") }
        guard request.keys.count <= maximumKeys else {
            throw PublishError(.badRequest, "\(request.keys.count) keys: at most \(maximumKeys) per publish")
        }
        guard let current = ENIntervalNumber(containing: now) else { throw PublishError(.internalError, "the clock is before 1970") }
        // The reference server decodes it as an int32 interval number and refuses what is not one.
        if let onset = request.symptomOnsetInterval, !(0...Int64(UInt32.max)).contains(onset) {
            throw PublishError(.badRequest, "symptomOnsetInterval \(onset) is not an interval number")
        }
        let onset = symptomOnset(request: request.symptomOnsetInterval, certificate: certificateOnset, current: Int64(current.rawValue), now: now)
        var accepted = [AcceptedKey]()
        var warnings = [String]()
        var keyErrors = 0
        func bad(_ warning: String) {
            warnings.append(warning)
            keyErrors += 1
        }
        for (index, key) in request.keys.enumerated() {
            let name = "temporaryExposureKeys[\(index)]"
            // A bad key is dropped, not the request (the reference's per-key transform errors).
            guard let bytes = Self.decodeBase64(key.key), bytes.count == 16 else {
                bad("\(name): the key is not 16 bytes of base64")
                continue
            }
            guard (1...144).contains(key.rollingPeriod) else {
                bad("\(name): rollingPeriod \(key.rollingPeriod) is not within 1...144")
                continue
            }
            guard (0...8).contains(key.transmissionRisk) else {
                bad("\(name): transmissionRisk \(key.transmissionRisk) is not within 0...8")
                continue
            }
            guard key.rollingStartNumber >= 0, key.rollingStartNumber <= Int64(UInt32.max) else {
                bad("\(name): rollingStartNumber \(key.rollingStartNumber) is not an interval number")
                continue
            }
            if key.rollingStartNumber > Int64(current.rawValue) {
                bad("\(name): starts in the future (\(key.rollingStartNumber) > \(current.rawValue))")
                continue
            }
            if key.rollingStartNumber + key.rollingPeriod < Int64(current.rawValue) - Int64(maximumIntervalAge) {
                bad("\(name): older than \(maximumIntervalAge / 6) hours")
                continue
            }
            // Compared in Int64 and narrowed only once within ±14, so no onset can trap here.
            let days = (key.rollingStartNumber / 144) - (onset / 144)
            guard abs(days) <= Int64(maximumSymptomOnsetDays), let daysSinceOnset = Int32(exactly: days) else {
                warnings.append("\(name): \(days) days from symptom onset, beyond ±\(maximumSymptomOnsetDays)")
                continue
            }
            let temporaryKey: TemporaryExposureKey
            do {
                temporaryKey = try TemporaryExposureKey(
                    keyData: Bytes16(bytes)!, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(key.rollingStartNumber)),
                    rollingPeriod: UInt32(key.rollingPeriod))
            } catch {
                bad("\(name): \(error)")
                continue
            }
            // Never out before the delay has passed since both its end and its publication:
            // matching accepts an RPI up to 2 h after its own interval (GMS, Apple, gaend), so a
            // key out sooner lets anyone replay its last RPIs, with an AEM of their choosing
            // (issue 53; the reference server's MIN_WINDOW_AGE, internal/export/batcher.go). A key
            // still valid now waits until it is off the air and its UTC day is over, plus the
            // delay, so a key that started at noon is not out while phones still send it.
            let end = key.rollingStartNumber + key.rollingPeriod
            let endTime = UnixTime(seconds: end * ENIntervalNumber.seconds)
            let nextMidnight = UTCDay(containing: now).advanced(by: 1).start
            let exportAfter =
                releaseSameDayKeys
                ? now
                : (end > Int64(current.rawValue) ? max(endTime, nextMidnight) : now).adding(seconds: embargoDelay)
            accepted.append(
                AcceptedKey(
                    key: temporaryKey, transmissionRisk: Self.transmissionRisk(Int32(key.transmissionRisk), reportType: reportType),
                    daysSinceOnsetOfSymptoms: daysSinceOnset, exportAfter: exportAfter))
        }
        // Refused only when bad keys left nothing (ENS publish.go: `transformError != nil &&
        // len(exposures) == 0`); keys all dropped for their distance from the onset are warnings,
        // and the publish succeeds with nothing inserted.
        guard !accepted.isEmpty || keyErrors == 0 else {
            throw PublishError(.badRequest, "no key was acceptable: \(warnings.joined(separator: "; "))")
        }
        // The same key twice in one request is the client's mistake, refused as such (issue 53: it
        // was refused as missing_revision_token, a second copy taken for a revision).
        var seen = Set<Bytes16>()
        for key in accepted where !seen.insert(key.key.keyData).inserted {
            throw PublishError(.badRequest, "the same key appears twice in one publish: each key is sent once")
        }
        // Sorted by start and period: a key starting inside the one before it must start with it
        // (a key replaced the same day), else the set is not one device's (the reference's "non
        // aligned overlapping intervals"); at most 3 keys per start.
        let ordered = accepted.sorted {
            ($0.key.rollingStartIntervalNumber.rawValue, $0.key.rollingPeriod) < ($1.key.rollingStartIntervalNumber.rawValue, $1.key.rollingPeriod)
        }
        var sameStart = [UInt32: Int]()
        var previous: (start: UInt32, end: UInt32)?
        for key in ordered {
            let start = key.key.rollingStartIntervalNumber.rawValue
            let end = start + key.key.rollingPeriod
            sameStart[start, default: 0] += 1
            if let last = previous, start != last.start, start < last.end {
                throw PublishError(
                    .badRequest, "the keys have non aligned overlapping intervals: \(start) overlaps a key valid from \(last.start) to \(last.end)")
            }
            previous = (start, end)
        }
        if let crowded = sameStart.filter({ $0.value > maximumSameStartKeys }).keys.min() {
            throw PublishError(.badRequest, "more than \(maximumSameStartKeys) keys start at interval \(crowded)")
        }
        return Outcome(accepted: accepted, warnings: warnings, keyErrors: keyErrors)
    }

    /// Standard or URL alphabet, padded or not (pkg/base64util/decode.go).
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while normalized.count % 4 != 0 { normalized += "=" }
        return Data(base64Encoded: normalized).map(Array.init)
    }
}
