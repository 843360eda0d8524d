// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Detection
import ENCore
import KeyFiles

/// T0 of the worked example: 2020-04-02T12:00:00Z.
let t0 = UnixTime(seconds: 1_585_828_800)

/// A sighting with the given RSSIs at `time`, the previous scan having ended at `previous`.
func sighting(_ time: UnixTime, rssi: [Int8], previous: UnixTime?, tx: Int8 = 8, duration: Int64 = 0) -> MatchedSighting {
    var summary = RSSISummary()
    rssi.forEach { summary.add($0) }
    let aggregate = ContactAggregate(
        rpi: RollingProximityIdentifier(.zero), aem: AssociatedEncryptedMetadata((0, 0, 0, 0)), firstSeen: time,
        lastSeen: time.adding(seconds: duration), reports: UInt16(rssi.count), rssi: summary, previousScanEnd: previous)
    return MatchedSighting(aggregate: aggregate, metadata: .version1_1(txPower: tx, calibrationConfidence: .low))
}

func diagnosisKey(report: ReportType = .confirmedTest, days: Int32? = nil, risk: Int32 = 4) -> DiagnosisKey {
    DiagnosisKey(
        key: try! TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_642_976)),
        transmissionRiskLevel: risk, reportType: report, daysSinceOnsetOfSymptoms: days)
}

/// The sightings of gaen-spec.md §4.3: (t, calibrated RSSI, previous scan end). The first two are one
/// scan's reports of one RPI, so in the log they are one aggregate.
let workedExample = KeyMatch(
    key: diagnosisKey(days: 0),
    sightings: [
        sighting(t0, rssi: [-50, -56], previous: t0.adding(seconds: -250), duration: 1),
        sighting(t0.adding(seconds: 240), rssi: [-60], previous: t0.adding(seconds: 4)),
        sighting(t0.adding(seconds: 480), rssi: [-72, -70], previous: t0.adding(seconds: 244), duration: 2),
        sighting(t0.adding(seconds: 1800), rssi: [-45], previous: t0.adding(seconds: 1500)),
    ])
