// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Foundation
import KeyFiles

/// Exposure windows read from a file, for `gaenctl tools score`: an array of windows in the shape
/// `gaenctl exposures --json` writes (`day`, `report_type`, `scan_instances` with
/// `typical_attenuation`…), or in the Android API's names as apps and test vectors write them
/// (`dateMillisSinceEpoch` or Corona-Warn-App's `ageInDays`, `reportType`, `infectiousness`,
/// `calibrationConfidence` as numbers or names, `scanInstances` with `typicalAttenuation(Db)`,
/// `minAttenuation(Db)`, `secondsSinceLastScan`). Every refusal names the window's index and key.
package struct WindowsFile: Sendable {
    package var windows: [ExposureWindow]
    /// Scan instances whose secondsSinceLastScan was negative, counted as 0 seconds. GMS never
    /// writes one, but a window that spans a clock change can carry one: Corona-Warn-App's vectors
    /// have one (−86,160 s), which its own calculation ignores, as a 0 does here.
    package var clampedScanInstances: Int

    package static let maximumBytes = 16 << 20
    package static let maximumWindows = 100_000
    /// A day of seconds: the most one scan instance can claim.
    package static let maximumSeconds = 86_400

    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package var location: String
        package var problem: String

        package var description: String { location.isEmpty ? problem : "\(location): \(problem)" }
    }

    /// Reads `data`; `today` places windows given by `ageInDays`.
    package init(json data: Data, today: UTCDay) throws(Failure) {
        guard data.count <= Self.maximumBytes else {
            throw Failure(location: "", problem: "\(data.count) bytes, over the \(Self.maximumBytes)-byte limit")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw Failure(location: "", problem: "not JSON (\(error.localizedDescription))")
        }
        guard let list = root as? [Any] else { throw Failure(location: "", problem: "not a JSON array of exposure windows") }
        guard list.count <= Self.maximumWindows else {
            throw Failure(location: "", problem: "\(list.count) windows, over the limit of \(Self.maximumWindows)")
        }
        var windows = [ExposureWindow]()
        var clamped = 0
        for (index, element) in list.enumerated() {
            guard let object = element as? [String: Any] else { throw Failure(location: "window \(index)", problem: "not a JSON object") }
            do throws(Failure) {
                windows.append(try Self.window(object, today: today, clamped: &clamped))
            } catch {
                throw Failure(location: "window \(index)" + (error.location.isEmpty ? "" : ", \(error.location)"), problem: error.problem)
            }
        }
        self.windows = windows
        clampedScanInstances = clamped
    }

    private static func window(_ object: [String: Any], today: UTCDay, clamped: inout Int) throws(Failure) -> ExposureWindow {
        let day: UTCDay
        if let text = object["day"] {
            guard let text = text as? String, let parsed = UTCDay(parsing: text) else { throw Failure(location: "day", problem: "\(text) is not YYYY-MM-DD") }
            day = parsed
        } else if let millis = object["dateMillisSinceEpoch"] {
            guard let value = ConfigurationReader.integer(millis), (0...Int(Int64.max / 2)).contains(value) else {
                throw Failure(location: "dateMillisSinceEpoch", problem: "\(millis) is not a time in milliseconds")
            }
            day = UTCDay(containing: UnixTime(seconds: Int64(value / 1000)))
        } else if let age = object["ageInDays"] {
            guard let value = ConfigurationReader.integer(age), (0...3650).contains(value) else {
                throw Failure(location: "ageInDays", problem: "\(age) is not a number of days in 0...3650")
            }
            day = UTCDay(daysSinceEpoch: today.daysSinceEpoch - Int64(value))
        } else {
            throw Failure(location: "", problem: "no day (day, dateMillisSinceEpoch or ageInDays)")
        }
        let reportType: ReportType = try enumValue(object, keys: ["report_type", "reportType"], all: ReportType.allCases, raw: { Int($0.rawValue) })
        let infectiousness: Infectiousness = try enumValue(
            object, keys: ["infectiousness"], all: [Infectiousness.none, .standard, .high], raw: { $0.rawValue })
        let confidence: CalibrationConfidence =
            object["calibration_confidence"] == nil && object["calibrationConfidence"] == nil
            ? .lowest
            : try enumValue(object, keys: ["calibration_confidence", "calibrationConfidence"], all: CalibrationConfidence.allCases, raw: { Int($0.rawValue) })
        guard let instances = (object["scan_instances"] ?? object["scanInstances"]) as? [Any] else {
            throw Failure(location: "scan_instances", problem: "missing, or not an array")
        }
        var scanInstances = [ScanInstance]()
        for (position, element) in instances.enumerated() {
            guard let instance = element as? [String: Any] else { throw Failure(location: "scan instance \(position)", problem: "not a JSON object") }
            func value(_ names: [String], in range: ClosedRange<Int>) throws(Failure) -> Int {
                guard let name = names.first(where: { instance[$0] != nil }) else {
                    throw Failure(location: "scan instance \(position)", problem: "no \(names[0])")
                }
                guard let number = ConfigurationReader.integer(instance[name]!), range.contains(number) else {
                    throw Failure(
                        location: "scan instance \(position), \(name)",
                        problem: "\(instance[name]!) is not an integer in \(range.lowerBound)...\(range.upperBound)")
                }
                return number
            }
            let typical = try value(["typical_attenuation", "typicalAttenuation", "typicalAttenuationDb"], in: 0...255)
            let minimum = try value(["minimum_attenuation", "minAttenuation", "minAttenuationDb"], in: 0...255)
            var seconds = try value(["seconds_since_last_scan", "secondsSinceLastScan"], in: -maximumSeconds...maximumSeconds)
            if seconds < 0 {
                seconds = 0
                clamped += 1
            }
            scanInstances.append(ScanInstance(typicalAttenuation: typical, minimumAttenuation: minimum, secondsSinceLastScan: seconds))
        }
        return ExposureWindow(
            day: day, reportType: reportType, infectiousness: infectiousness, calibrationConfidence: confidence,
            transmissionRiskLevel: ConfigurationReader.integer(object["transmission_risk_level"] ?? 0) ?? 0, scanInstances: scanInstances)
    }

    /// An enum given by gaend's name (`confirmed-test`), Google's (`CONFIRMED_TEST`) or its number.
    private static func enumValue<Value: CustomStringConvertible>(
        _ object: [String: Any], keys: [String], all: [Value], raw: (Value) -> Int
    ) throws(Failure) -> Value {
        guard let key = keys.first(where: { object[$0] != nil }), let given = object[key] else {
            throw Failure(location: keys[0], problem: "missing")
        }
        if let number = ConfigurationReader.integer(given), let value = all.first(where: { raw($0) == number }) { return value }
        if let name = given as? String {
            let normalized = name.lowercased().replacingOccurrences(of: "_", with: "-")
            if let value = all.first(where: { $0.description == normalized }) { return value }
        }
        let names = all.map(\.description).joined(separator: ", ")
        throw Failure(location: key, problem: "\(given) is not one of \(names) (or their numbers)")
    }
}
