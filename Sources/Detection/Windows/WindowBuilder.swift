// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
package import KeyFiles
import ContactLog

/// Builds exposure windows from a key's sightings as Google's `findExposureWindows` does
/// (gaen-spec.md §4.2; docs/detection.md):
///
/// - sightings no more than 25.5 s apart form one scan instance (an aggregate is one scan's reports
///   of one RPI, so an instance is usually one aggregate, or two when the RPI changed mid-scan);
/// - a window starts at its first sighting and a new one at the first sighting 1,800 s or more later;
/// - typical attenuation = round-half-up of the mean of max(TX power − RSSI, 0) over the instance's
///   readings, each with the TX power its own RPI's metadata decrypted to
///   (`ExposureWindowUtils.getTypicalAttenuation`, `SightingRecordWithMetadata.attenuationValue`);
///   minimum = the smallest max(TX power − strongest RSSI, 0). The log keeps an aggregate's sum and
///   strongest reading, not each reading, so an aggregate is clamped as a whole: exact whenever its
///   readings all lie on one side of its TX power, which (TX power being the power at 0 m) is all
///   but always;
/// - secondsSinceLastScan = 60 × min(5, ⌊t/60⌋ − ⌊previous scan end/60⌋), 120 when unknown.
package enum WindowBuilder {
    package static let maximumWindowSeconds: Int64 = 1800
    package static let sameInstanceMilliseconds: Int64 = 25_500

    /// The windows of one matched key, in time order.
    package static func windows(for match: KeyMatch, configuration: V2Configuration) -> [ExposureWindow] {
        let reportType = mappedReportType(match.key.reportType, configuration: configuration)
        let infectiousness = infectiousness(daysSinceOnset: match.key.daysSinceOnsetOfSymptoms, configuration: configuration)
        var windows = [ExposureWindow]()
        var windowStarts = [UnixTime]()
        for group in instanceGroups(match.sightings) {
            let start = group[0].aggregate.firstSeen
            let instance = scanInstance(group)
            if let last = windows.indices.last, let windowStart = windowStarts.last,
                start.seconds - windowStart.seconds < maximumWindowSeconds
            {
                windows[last].scanInstances.append(instance)
                continue
            }
            windowStarts.append(start)
            windows.append(
                ExposureWindow(
                    day: UTCDay(containing: start), start: start, reportType: reportType, infectiousness: infectiousness,
                    calibrationConfidence: group[0].metadata.calibrationConfidence,
                    transmissionRiskLevel: Int(match.key.transmissionRiskLevel), scanInstances: [instance]))
        }
        return windows
    }

    /// Sightings (sorted by time) cut into scan instances.
    static func instanceGroups(_ sightings: [MatchedSighting]) -> [[MatchedSighting]] {
        var groups = [[MatchedSighting]]()
        for sighting in sightings {
            if let previous = groups.last?.last,
                sighting.aggregate.firstSeen.milliseconds - previous.aggregate.lastSeen.milliseconds <= sameInstanceMilliseconds
            {
                groups[groups.count - 1].append(sighting)
            } else {
                groups.append([sighting])
            }
        }
        return groups
    }

    static func scanInstance(_ group: [MatchedSighting]) -> ScanInstance {
        var attenuationSum = 0.0
        var readings = 0.0
        var minimum = 255
        for sighting in group {
            let tx = Double(sighting.metadata.txPower)
            let rssi = sighting.aggregate.rssi
            guard let strongest = rssi.maximum, let mean = rssi.mean else { continue }
            attenuationSum += Double(rssi.validReports) * max(0, tx - mean)
            readings += Double(rssi.validReports)
            minimum = min(minimum, max(0, Int(sighting.metadata.txPower) - Int(strongest)))
        }
        return ScanInstance(
            typicalAttenuation: min(255, javaRound(attenuationSum / max(readings, 1))), minimumAttenuation: minimum,
            secondsSinceLastScan: secondsSinceLastScan(at: group[0].aggregate.firstSeen, previousScanEnd: group[0].aggregate.previousScanEnd))
    }

    /// Java's `Math.round`: half up (−0.5 rounds to 0), which Google's reference uses.
    static func javaRound(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }

    static func secondsSinceLastScan(at time: UnixTime, previousScanEnd: UnixTime?) -> Int {
        guard let previousScanEnd else { return 120 }
        let minutes = floorDiv(time.seconds, 60) - floorDiv(previousScanEnd.seconds, 60)
        return 60 * Int(max(0, min(5, minutes)))
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }

    /// The key's report type, or the configured one when it has none.
    package static func mappedReportType(_ type: ReportType, configuration: V2Configuration) -> ReportType {
        guard type == .unknown else { return type }
        return configuration.reportTypeWhenMissing.map { ReportType(rawValue: Int32($0.rawValue))! } ?? .unknown
    }

    /// Infectiousness from days since onset: the "missing" value when absent or |days| > 14, the
    /// map's value otherwise, `.none` for days the map leaves out.
    package static func infectiousness(daysSinceOnset: Int32?, configuration: V2Configuration) -> Infectiousness {
        guard let days = daysSinceOnset, abs(days) <= 14 else { return configuration.infectiousnessWhenDaysSinceOnsetMissing }
        return configuration.infectiousnessForDaysSinceOnset[Int(days)] ?? .none
    }
}
