// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import KeyFiles

extension ExposureWindow {
    /// Reads a window back from the JSON `DetectionResult.json` writes for it (the stored results),
    /// `nil` if anything is missing or out of range.
    package init?(json object: [String: Any]) {
        guard let dayText = object["day"] as? String, let day = UTCDay(parsing: dayText),
            let type = (object["report_type"] as? String).flatMap({ name in ReportType.allCases.first { $0.description == name } }),
            let infectiousness = (object["infectiousness"] as? String).flatMap({ name in
                [Infectiousness.none, .standard, .high].first { $0.description == name }
            }),
            let confidence = (object["calibration_confidence"] as? String).flatMap({ name in
                CalibrationConfidence.allCases.first { $0.description == name }
            }),
            let instances = object["scan_instances"] as? [[String: Any]]
        else { return nil }
        var scanInstances = [ScanInstance]()
        for instance in instances {
            guard let typical = instance["typical_attenuation"] as? Int, let minimum = instance["minimum_attenuation"] as? Int,
                let seconds = instance["seconds_since_last_scan"] as? Int, (0...255).contains(typical), (0...255).contains(minimum),
                (0...3600).contains(seconds)
            else { return nil }
            scanInstances.append(ScanInstance(typicalAttenuation: typical, minimumAttenuation: minimum, secondsSinceLastScan: seconds))
        }
        self.init(
            day: day, reportType: type, infectiousness: infectiousness, calibrationConfidence: confidence,
            transmissionRiskLevel: object["transmission_risk_level"] as? Int ?? 0, scanInstances: scanInstances)
    }
}
