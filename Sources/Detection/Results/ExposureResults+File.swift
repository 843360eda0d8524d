// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
package import ENCore
import Foundation
import KeyFiles
package import Storage

/// `<data-dir>/exposure-results.json` (atomic, 0600): the stored results, written after each run
/// that changed them. docs/detection.md, "Stored results", has the format.
///
/// A file that does not read back never stops the daemon: it reads as no results, marked `lost`,
/// and the worker matches every key file again and moves the file aside as
/// `exposure-results.json.damaged-<unix time>` (never over an earlier copy); a single result that
/// does not read back is left out and counted. Without the file (a first start, or an upgrade from
/// a version that kept only the last run's windows in `detection-state.json`), those windows are
/// taken over as legacy windows.
extension ExposureResults {
    package static let fileName = "exposure-results.json"
    package static let format: Int64 = 1
    static let maximumFileBytes = 64 << 20

    package static func path(in dataDirectory: DataDirectory) -> String { dataDirectory.path(of: fileName) }

    /// What loading found: the results, and what was wrong with the file, if anything.
    package struct Loaded: Sendable {
        package var results: ExposureResults
        package var problem: String?
        /// Whether the results came from the previous format's state file.
        package var migrated: Bool
        /// Whether the file did not read back, so every stored result was lost (issue 40).
        package var lost = false
    }

    package static func load(from dataDirectory: DataDirectory, now: UnixTime) -> Loaded {
        let path = path(in: dataDirectory)
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: maximumFileBytes)
        } catch {
            return damaged(path, "\(error)", now: now)
        }
        guard let bytes else {
            let legacy = DetectionState.legacyWindows(in: dataDirectory)
            return Loaded(results: ExposureResults(legacyWindows: legacy), problem: nil, migrated: !legacy.isEmpty)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            return damaged(path, "it is not a JSON object", now: now)
        }
        guard let format = object["format"] as? Int64, format == Self.format else {
            return damaged(path, "format \(object["format"].map { "\($0)" } ?? "missing"), not \(Self.format)", now: now)
        }
        let entries = object["results"] as? [[String: Any]] ?? []
        let results = entries.compactMap(ExposureResult.init(json:))
        let windowEntries = object["legacy_windows"] as? [[String: Any]] ?? []
        let windows = windowEntries.compactMap(ExposureWindow.init(json:))
        let skipped = entries.count - results.count + windowEntries.count - windows.count
        return Loaded(
            results: ExposureResults(results, legacyWindows: windows),
            problem: skipped > 0 ? "\(path): \(skipped) stored result(s) did not read back and were left out" : nil, migrated: false)
    }

    private static func damaged(_ path: String, _ reason: String, now: UnixTime) -> Loaded {
        Loaded(results: ExposureResults(), problem: "\(path) does not read back (\(reason))", migrated: false, lost: true)
    }

    /// Moves a file that did not read back aside, once the worker has recorded that its results
    /// are to be found again (a crash before this reads the same damage at the next start); what
    /// became of it, for the journal.
    package static func setAsideDamaged(in dataDirectory: DataDirectory, now: UnixTime) -> String {
        do {
            return "moved to \(try AtomicFile.moveAside(path(in: dataDirectory), label: "damaged", stamp: now.seconds))"
        } catch {
            return "could not be moved aside (\(error))"
        }
    }

    package func save(to dataDirectory: DataDirectory) throws(FileSystemError) {
        let value = JSONValue.object([
            ("format", .int(Self.format)),
            ("results", .array(byKey.values.sorted { $0.matchedAt < $1.matchedAt }.map(\.json))),
            ("legacy_windows", .array(legacyWindows.map(DetectionResult.json))),
        ])
        try AtomicFile.write(Array(value.serialized().utf8), to: Self.path(in: dataDirectory))
    }
}

extension ExposureResult {
    var json: JSONValue {
        let key = match.key
        return .object([
            ("key", .string(key.key.keyData.hex)), ("rolling_start", .int(Int64(key.key.rollingStartIntervalNumber.rawValue))),
            ("rolling_period", .int(Int64(key.key.rollingPeriod))), ("transmission_risk_level", .int(Int64(key.transmissionRiskLevel))),
            ("report_type", .int(Int64(key.reportType.rawValue))),
            ("days_since_onset_of_symptoms", key.daysSinceOnsetOfSymptoms.map { .int(Int64($0)) } ?? .null),
            ("report_type_transitions", .int(Int64(reportTypeTransitions))), ("matched_at", .int(matchedAt.seconds)),
            ("sightings", .array(match.sightings.map(Self.json))),
        ])
    }

    static func json(_ sighting: MatchedSighting) -> JSONValue {
        let aggregate = sighting.aggregate
        return .object([
            ("rpi", .string(aggregate.rpi.bytes.hex)), ("aem", .string(Hex.encode(aggregate.aem.array))),
            ("metadata", .string(Hex.encode(sighting.metadata.array))), ("first_ms", .int(aggregate.firstSeen.milliseconds)),
            ("last_ms", .int(aggregate.lastSeen.milliseconds)), ("reports", .int(Int64(aggregate.reports))),
            ("rssi_maximum", aggregate.rssi.maximum.map { .int(Int64($0)) } ?? .null), ("rssi_sum", .int(Int64(aggregate.rssi.sum))),
            ("rssi_valid", .int(Int64(aggregate.rssi.validReports))),
            ("previous_scan_end_ms", aggregate.previousScanEnd.map { .int($0.milliseconds) } ?? .null),
        ])
    }

    /// Reads a result back; `nil` when any field is missing or out of its range.
    init?(json object: [String: Any]) {
        guard let keyHex = object["key"] as? String, let keyData = try? Bytes16(hex: keyHex),
            let start = (object["rolling_start"] as? Int64).flatMap(UInt32.init(exactly:)), start > 0,
            let period = (object["rolling_period"] as? Int64).flatMap(UInt32.init(exactly:)),
            let tek = try? TemporaryExposureKey(keyData: keyData, rollingStartIntervalNumber: ENIntervalNumber(rawValue: start), rollingPeriod: period),
            let risk = (object["transmission_risk_level"] as? Int64).flatMap(Int32.init(exactly:)), (0...8).contains(risk),
            let type = (object["report_type"] as? Int64).flatMap(Int32.init(exactly:)).flatMap(ReportType.init(rawValue:)),
            let transitions = (object["report_type_transitions"] as? Int64).flatMap(Int.init(exactly:)), transitions >= 0,
            let matchedAt = (object["matched_at"] as? Int64).flatMap(UnixTime.init(exactlySeconds:)),
            let entries = object["sightings"] as? [[String: Any]], !entries.isEmpty
        else { return nil }
        let days: Int32?
        if object["days_since_onset_of_symptoms"] is NSNull || object["days_since_onset_of_symptoms"] == nil {
            days = nil
        } else {
            guard let value = (object["days_since_onset_of_symptoms"] as? Int64).flatMap(Int32.init(exactly:)) else { return nil }
            days = value
        }
        var sightings = [MatchedSighting]()
        for entry in entries {
            guard let sighting = Self.sighting(entry) else { return nil }
            sightings.append(sighting)
        }
        self.init(
            match: KeyMatch(
                key: DiagnosisKey(key: tek, transmissionRiskLevel: risk, reportType: type, daysSinceOnsetOfSymptoms: days),
                sightings: sightings),
            reportTypeTransitions: transitions, matchedAt: matchedAt)
    }

    /// Times are bounded to what UnixTime and the contact log hold (years 0…9999 would do; the
    /// log's own range is far smaller), so no arithmetic on them can overflow later.
    static let millisecondBounds: ClosedRange<Int64> = 0...253_402_300_799_000

    static func sighting(_ object: [String: Any]) -> MatchedSighting? {
        guard let rpi = (object["rpi"] as? String).flatMap({ try? Bytes16(hex: $0) }),
            let aem = (object["aem"] as? String).flatMap({ try? Hex.decode($0, count: 4) }).flatMap(AssociatedEncryptedMetadata.init),
            let metadata = (object["metadata"] as? String).flatMap({ try? Hex.decode($0, count: 4) }).flatMap(BluetoothMetadata.init),
            let first = object["first_ms"] as? Int64, millisecondBounds.contains(first),
            let last = object["last_ms"] as? Int64, millisecondBounds.contains(last), last >= first,
            let reports = (object["reports"] as? Int64).flatMap(UInt16.init(exactly:)),
            let sum = (object["rssi_sum"] as? Int64).flatMap(Int32.init(exactly:)),
            let valid = (object["rssi_valid"] as? Int64).flatMap(UInt16.init(exactly:)), valid > 0
        else { return nil }
        guard let maximum = (object["rssi_maximum"] as? Int64).flatMap(Int8.init(exactly:)), maximum != RSSISummary.notAvailable else {
            return nil
        }
        let previous: UnixTime?
        if let value = object["previous_scan_end_ms"] as? Int64 {
            guard millisecondBounds.contains(value) else { return nil }
            previous = UnixTime(milliseconds: value)
        } else {
            previous = nil
        }
        let aggregate = ContactAggregate(
            rpi: RollingProximityIdentifier(rpi), aem: aem, firstSeen: UnixTime(milliseconds: first), lastSeen: UnixTime(milliseconds: last),
            reports: reports, rssi: RSSISummary(maximum: maximum, sum: sum, validReports: valid), previousScanEnd: previous)
        return MatchedSighting(aggregate: aggregate, metadata: metadata)
    }
}
