// SPDX-License-Identifier: GPL-3.0-or-later

package import Beacon
package import ContactLog
package import Detection
package import ENCore
package import GaendConfiguration
package import GaendAPI
package import OwnerSignals

/// Manager1's properties as one typed value, assembled from what their owners publish (issue 48):
/// the owner's status, the radio and what is on the air, the log's activity, the held sightings,
/// detection's snapshot and the clock's verdict. ManagerService holds the one last published, so
/// Get and GetAll read fields, and PropertiesChanged carries the properties that differ from it
/// (BlueZ's adapter.c announces its settings so: `settings_changed`).
package struct ManagerSnapshot: Sendable, Equatable {
    package var owner: OwnerStatus
    package var authorization: String
    package var enabled: Bool
    package var radio: RadioSpec
    package var advertising: Bool
    /// What is on the air, only while the status is active.
    package var beacon: OnAir?
    package var log: ContactLogWriter.Activity
    package var heldAggregates: Int
    package var detection: DetectionSnapshot
    package var keyServer: String
    package var region: String
    package var clockTrusted: Bool
    package var clockOffsetMilliseconds: Int64

    /// One property's value.
    package func value(of property: Manager1.Property) -> Manager.PropertyValue {
        let answer = detection.answer
        switch property {
        case .status: return .string(owner.status.rawValue)
        case .statusReason: return .string(owner.statusReason)
        case .authorizationStatus: return .string(authorization)
        case .enabled: return .boolean(enabled)
        case .radioBackend: return .string(radio.description)
        case .advertising: return .boolean(advertising)
        case .advertisingSince: return .time(beacon?.since)
        case .address: return .string(beacon?.address?.description ?? "")
        case .rpiInterval: return .count(Int(beacon?.interval.rawValue ?? 0))
        case .nextRotation: return .time(beacon?.nextRotation)
        case .lastScanTime: return .time(log.lastWindowEnd)
        case .sightingsToday: return .count(log.aggregatesToday)
        case .heldSightings: return .count(heldAggregates)
        case .lastDetectionTime: return .time(detection.lastDetection)
        case .lastDetectionError: return .string(detection.lastError ?? "")
        case .detectionsRemaining: return .count(detection.remainingRuns)
        case .nextDetectionTime: return .time(detection.nextDetection)
        case .keyServer: return .string(keyServer)
        case .lastDownloadTime: return .time(detection.lastDownload)
        case .exposureDays: return .strings(answer.days.map(\.description))
        case .lastExposureTime: return .time(answer.lastExposure)
        case .exposureClassification: return .count(answer.classification?.index ?? 0)
        case .exposureClassificationName: return .string(answer.classification?.name ?? "")
        case .region: return .string(region)
        case .version: return .string(GaendVersion.string)
        case .clockTrusted: return .boolean(clockTrusted)
        case .clockOffset: return .signed(clockOffsetMilliseconds)
        }
    }

    /// The properties whose values differ from `earlier`'s.
    package func changes(since earlier: ManagerSnapshot?) -> [Manager1.Property] {
        Manager1.Property.allCases.filter { earlier?.value(of: $0) != value(of: $0) }
    }
}
