// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Detection
import ENCore
import KeyFiles
import Testing

/// Rules read from GMS's matching code, each with a case the previous rules got wrong
/// (docs/detection.md cites the file of each).
struct GMSRuleTests {
    /// A sighting of the RPI numbered `rpi` (its last byte), at `time`, with its own TX power.
    func heard(_ time: UnixTime, rpi: UInt64, rssi: [Int8], tx: Int8 = 8) -> MatchedSighting {
        var sighting = sighting(time, rssi: rssi, previous: time.adding(seconds: -250), tx: tx)
        sighting.aggregate.rpi = RollingProximityIdentifier(Bytes16(words: (0, rpi)))
        return sighting
    }

    var v2: V2Configuration {
        var configuration = V2Configuration()
        configuration.infectiousnessForDaysSinceOnset = [0: .standard]
        return configuration
    }

    /// SightingRecordWithMetadata.attenuationValue: each reading with its own TX power, clamped at
    /// 0 before ExposureWindowUtils.getTypicalAttenuation averages.
    @Test func typicalAttenuationUsesEachSightingsOwnTXPowerAndClampsFirst() {
        // A rotation mid-scan: the two RPIs' metadata carry different TX powers.
        let rotated = [heard(t0, rpi: 1, rssi: [-60, -62]), heard(t0.adding(seconds: 2), rpi: 2, rssi: [-60], tx: -10)]
        let instance = WindowBuilder.windows(for: KeyMatch(key: diagnosisKey(days: 0), sightings: rotated), configuration: v2)[0].scanInstances
        // (68 + 70 + 50) / 3 = 62.7 → 63; the smallest is 50, from the second RPI's TX power.
        #expect(instance.map(\.typicalAttenuation) == [63])
        #expect(instance.map(\.minimumAttenuation) == [50])

        // A reading stronger than the TX power counts as 0 dB, not as −2 dB.
        let close = [heard(t0, rpi: 1, rssi: [10]), heard(t0.adding(seconds: 2), rpi: 2, rssi: [-40])]
        let clamped = WindowBuilder.windows(for: KeyMatch(key: diagnosisKey(days: 0), sightings: close), configuration: v2)[0].scanInstances
        #expect(clamped.map(\.typicalAttenuation) == [24])  // (0 + 48) / 2, not 8 − (10 − 40) / 2 = 23
        #expect(clamped.map(\.minimumAttenuation) == [0])
    }

    /// KeyExposureEvaluator.findExposures dates an exposure by its key's rolling start and counts
    /// days from it (bucketLatencyDays), so an exposure after UTC midnight is still the key's day.
    @Test func v1DatesAnExposureByItsKeyEvenAcrossUTCMidnight() {
        let midnight = UTCDay(daysSinceEpoch: 18_355).start  // the key (diagnosisKey) starts at 18354
        let sightings = [
            heard(midnight.adding(seconds: -20 * 60), rpi: 143, rssi: [-60]), heard(midnight.adding(seconds: -16 * 60), rpi: 143, rssi: [-60]),
            heard(midnight.adding(seconds: 20 * 60), rpi: 143, rssi: [-60]),
        ]
        var configuration = V1Configuration()
        configuration.attenuationDurationThresholds = [50, 74]
        let infos = V1Scorer.exposures(for: KeyMatch(key: diagnosisKey(days: 0), sightings: sightings), configuration: configuration, now: v1Now)
        #expect(infos.count == 2)
        #expect(infos.map(\.date) == [UTCDay(daysSinceEpoch: 18_354), UTCDay(daysSinceEpoch: 18_354)])
        // Noon of 18357 is 3.5 days after the key's start: 3 whole days, for both.
        #expect(infos.map(\.daysSinceExposure) == [3, 3])
        #expect(V1Scorer.summary([infos]).daysSinceLastExposure == 3)
    }

    /// getValidSightingsForRpi aggregates each RPI's sightings into scans, keeping the strongest
    /// sighting and its time.
    @Test func v1KeepsEachScansStrongestSightingAndItsTime() {
        let sightings = [
            heard(t0, rpi: 1, rssi: [-60]), heard(t0.adding(seconds: 10), rpi: 1, rssi: [-50]), heard(t0.adding(seconds: 300), rpi: 2, rssi: [-70]),
        ]
        var configuration = V1Configuration()
        configuration.attenuationDurationThresholds = [50, 74]
        let info = V1Scorer.exposures(for: KeyMatch(key: diagnosisKey(days: 0), sightings: sightings), configuration: configuration, now: v1Now)
        // Scans at t0 + 10 s (58 dB) and t0 + 300 s (78 dB): 150 + 290 s at 58, 150 s at 78.
        #expect(info.map(\.attenuationDurations) == [[0, 440, 150]])
        #expect(info.map(\.durationMinutes) == [10])
    }

    /// Apple's maximumRiskScore is an ENRiskScore (0…255); the full range and GMS's summation sit
    /// beside it.
    @Test func v1SummaryCapsTheMaximumAndSumsTheFullRange() {
        var configuration = V1Configuration()
        configuration.attenuationDurationThresholds = [50, 74]
        let key = DiagnosisKey(
            key: try! TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_642_976)),
            transmissionRiskLevel: 8, reportType: .confirmedTest)
        configuration.transmissionRiskScores = [8, 8, 8, 8, 8, 8, 8, 8]
        configuration.attenuationScores = [8, 8, 8, 8, 8, 8, 8, 8]
        configuration.durationScores = [8, 8, 8, 8, 8, 8, 8, 8]
        configuration.daysSinceLastExposureScores = [8, 8, 8, 8, 8, 8, 8, 8]
        let infos = V1Scorer.exposures(for: KeyMatch(key: key, sightings: workedExample.sightings), configuration: configuration, now: v1Now)
        let summary = V1Scorer.summary([infos])
        #expect(infos.map(\.totalRiskScore) == [4096, 4096])
        #expect(summary.maximumRiskScore == 255)
        #expect(summary.maximumRiskScoreFullRange == 4096)
        #expect(summary.summationRiskScore == 8192)
    }
}
