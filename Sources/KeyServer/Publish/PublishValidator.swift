// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
import Foundation

/// The reference server's rules for publishing (docs/getting-started/publishing-temporary-exposure-keys.md,
/// internal/publish/config.go, docs/tek_validation.md): what is refused outright, what is dropped
/// with a warning (a partial failure), and when each accepted key may be exported.
public struct PublishValidator: Sendable {
    public var maximumKeys = 30
    public var maximumSameStartKeys = 3
    /// How old a key's start may be: 360 hours.
    public var maximumIntervalAge = 360 * 6
    /// |days since symptom onset| allowed (tightened from 21 to 14 in the reference server).
    public var maximumSymptomOnsetDays = 14
    /// After a still-valid key's UTC day ends, how long it waits before export (Apple asks ≥ 2 h).
    public var embargoDelay: Int64 = 2 * 3600
    /// The delays an administrator may choose: none to the 14 days keys are kept (an option past
    /// Int64 milliseconds would trap on the first still-valid key).
    public static let embargoDelays: ClosedRange<Int64> = 0...14 * 86_400
    /// For demos and tests only: still-valid keys are exported at once (the reference server's
    /// DEBUG_RELEASE_SAME_DAY_KEYS), so a key shared today can be matched today.
    public var releaseSameDayKeys = false

    public init() {}

    /// A key that passed: its bytes, interval, and the earliest time it may be exported.
    public struct AcceptedKey: Sendable, Equatable {
        public var key: TemporaryExposureKey
        public var transmissionRisk: Int32
        public var daysSinceOnsetOfSymptoms: Int32?
        public var exportAfter: UnixTime

        public init(key: TemporaryExposureKey, transmissionRisk: Int32, daysSinceOnsetOfSymptoms: Int32?, exportAfter: UnixTime) {
            self.key = key
            self.transmissionRisk = transmissionRisk
            self.daysSinceOnsetOfSymptoms = daysSinceOnsetOfSymptoms
            self.exportAfter = exportAfter
        }
    }

    public struct Outcome: Sendable, Equatable {
        public var accepted: [AcceptedKey]
        /// One line per dropped key, naming it by index and saying why.
        public var warnings: [String]
        public var partialFailure: Bool { !warnings.isEmpty }
    }

    public func validate(_ request: PublishRequest, now: UnixTime) throws(PublishError) -> Outcome {
        guard !request.keys.isEmpty else { throw PublishError(.badRequest, "temporaryExposureKeys is empty") }
        guard request.keys.count <= maximumKeys else {
            throw PublishError(.badRequest, "\(request.keys.count) keys: at most \(maximumKeys) per publish")
        }
        guard let current = ENIntervalNumber(containing: now) else { throw PublishError(.internalError, "the clock is before 1970") }
        // The reference server decodes it as an int32 interval number and refuses what is not one.
        if let onset = request.symptomOnsetInterval, !(0...Int64(UInt32.max)).contains(onset) {
            throw PublishError(.badRequest, "symptomOnsetInterval \(onset) is not an interval number")
        }
        var accepted = [AcceptedKey]()
        var warnings = [String]()
        var sameStart = [Int64: Int]()
        for (index, key) in request.keys.enumerated() {
            let name = "temporaryExposureKeys[\(index)]"
            guard let bytes = Self.decodeBase64(key.key), bytes.count == 16 else {
                throw PublishError(.badRequest, "\(name).key is not 16 bytes of base64")
            }
            guard (1...144).contains(key.rollingPeriod) else {
                throw PublishError(.badRequest, "\(name).rollingPeriod \(key.rollingPeriod) is not within 1...144")
            }
            guard (0...8).contains(key.transmissionRisk) else {
                throw PublishError(.badRequest, "\(name).transmissionRisk \(key.transmissionRisk) is not within 0...8")
            }
            guard key.rollingStartNumber >= 0, key.rollingStartNumber <= Int64(UInt32.max) else {
                throw PublishError(.badRequest, "\(name).rollingStartNumber \(key.rollingStartNumber) is not an interval number")
            }
            if key.rollingStartNumber > Int64(current.rawValue) {
                warnings.append("\(name): starts in the future (\(key.rollingStartNumber) > \(current.rawValue))")
                continue
            }
            if key.rollingStartNumber + key.rollingPeriod < Int64(current.rawValue) - Int64(maximumIntervalAge) {
                warnings.append("\(name): older than \(maximumIntervalAge / 6) hours")
                continue
            }
            sameStart[key.rollingStartNumber, default: 0] += 1
            if sameStart[key.rollingStartNumber]! > maximumSameStartKeys {
                throw PublishError(.badRequest, "more than \(maximumSameStartKeys) keys start at interval \(key.rollingStartNumber)")
            }
            let start = ENIntervalNumber(rawValue: UInt32(key.rollingStartNumber))
            var onset: Int32?
            if let symptomOnset = request.symptomOnsetInterval {
                // Compared in Int64 and narrowed only once within ±14, so no onset can trap here.
                let days = (key.rollingStartNumber / 144) - (symptomOnset / 144)
                guard abs(days) <= Int64(maximumSymptomOnsetDays), let narrow = Int32(exactly: days) else {
                    warnings.append("\(name): \(days) days from symptom onset, beyond ±\(maximumSymptomOnsetDays)")
                    continue
                }
                onset = narrow
            }
            let temporaryKey: TemporaryExposureKey
            do {
                temporaryKey = try TemporaryExposureKey(
                    keyData: Bytes16(bytes)!, rollingStartIntervalNumber: start, rollingPeriod: UInt32(key.rollingPeriod))
            } catch {
                throw PublishError(.badRequest, "\(name): \(error)")
            }
            // Still valid now: held until its UTC day is over, plus the delay; otherwise at once.
            let end = key.rollingStartNumber + key.rollingPeriod
            let exportAfter =
                end > Int64(current.rawValue) && !releaseSameDayKeys
                ? UTCDay(containing: now).advanced(by: 1).start.adding(seconds: embargoDelay)
                : now
            accepted.append(AcceptedKey(key: temporaryKey, transmissionRisk: Int32(key.transmissionRisk), daysSinceOnsetOfSymptoms: onset, exportAfter: exportAfter))
        }
        return Outcome(accepted: accepted, warnings: warnings)
    }

    /// Standard or URL alphabet, padded or not (pkg/base64util/decode.go).
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while normalized.count % 4 != 0 { normalized += "=" }
        return Data(base64Encoded: normalized).map(Array.init)
    }
}
