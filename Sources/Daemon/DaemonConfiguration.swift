// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
public import HCI
public import Radio

/// The daemon's configuration: `/etc/gaend/gaend.conf` (`key = value` lines, `#` comments), then
/// the command line, whose options have the same names and win.
public struct DaemonConfiguration: Sendable {
    public var radio: RadioSpec = .none
    public var dataDirectory = "/var/lib/gaend"
    public var radioSettings = RadioSettings()
    /// Where Manager1 is served: the system bus by default.
    public var bus: ManagerService.Bus = .system
    /// Enable Exposure Notification at start, recording consent (a beacon set up by its owner).
    public var enable = false
    public var region = ""
    public var testMode = false
    public var servers = ServerSettings()

    /// The key server, the verification server and the exposure configuration.
    public struct ServerSettings: Sendable, Equatable {
        public var indexURL: String?
        public var exportBaseURL: String?
        /// Trusted export signing keys: key id, version, PEM file.
        public var exportKeys: [ExportKey] = []
        /// A file path, or an http(s) URL the health authority serves it from.
        public var exposureConfiguration: String?
        public var detectionIntervalHours = 4
        public var verificationURL: String?
        public var verificationAPIKey = ""
        public var publishURL: String?
        public var healthAuthorityID = ""

        public struct ExportKey: Sendable, Equatable {
            public var id: String
            public var version: String
            public var path: String
        }

        public var exposureConfigurationIsURL: Bool {
            exposureConfiguration.map { $0.hasPrefix("https://") || $0.hasPrefix("http://") } ?? false
        }
    }

    public init() {}

    /// The keys a file or the command line may set.
    public static let keys = [
        "radio", "data-dir", "scan-window", "scan-interval", "rotation-interval", "tx-power", "rssi-correction", "calibration-confidence",
        "bus", "enable", "region", "test-mode", "index-url", "export-base-url", "export-key", "exposure-configuration", "detection-interval",
        "verification-url", "verification-api-key", "publish-url", "health-authority-id",
    ]

    /// Applies `key = value` lines of a configuration file.
    public mutating func apply(file text: String, path: String) throws(DaemonConfigurationError) {
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw DaemonConfigurationError(key: "\(path):\(number + 1)", problem: "expected key = value")
            }
            try set(String(trimmed[..<equals]).trimmingWhitespace(), String(trimmed[trimmed.index(after: equals)...]).trimmingWhitespace())
        }
    }

    /// Sets one key; the error names it.
    public mutating func set(_ key: String, _ value: String) throws(DaemonConfigurationError) {
        func fail(_ problem: String) -> DaemonConfigurationError { DaemonConfigurationError(key: key, problem: "'\(value)' \(problem)") }
        switch key {
        case "radio":
            do {
                radio = try RadioSpec(parsing: value)
            } catch {
                throw DaemonConfigurationError(key: key, problem: error.problem)
            }
        case "data-dir":
            guard value.hasPrefix("/") else { throw fail("is not an absolute path") }
            dataDirectory = value
        case "scan-window":
            guard let seconds = Double(value), seconds > 0, seconds <= 60 else { throw fail("is not a number of seconds in (0, 60]") }
            radioSettings.scanWindowSeconds = seconds
        case "scan-interval":
            if value == "continuous" {
                radioSettings.scanInterval = nil
            } else {
                guard let range = Self.range(value), range.lowerBound >= 1, range.upperBound <= 3600 else {
                    throw fail("is not MIN-MAX seconds within 1...3600, or continuous")
                }
                radioSettings.scanInterval = range
            }
        case "rotation-interval":
            guard let range = Self.range(value), range.lowerBound >= 1, range.upperBound <= 3600 else {
                throw fail("is not MIN-MAX seconds within 1...3600")
            }
            radioSettings.rotationInterval = range
        case "tx-power":
            guard let power = Int8(value), (-127...20).contains(power) else { throw fail("is not a TX power in -127...20 dBm") }
            radioSettings.txPower = power
        case "rssi-correction":
            guard let correction = Int(value), (-50...50).contains(correction) else { throw fail("is not a correction in -50...50 dB") }
            radioSettings.rssiCorrection = correction
        case "calibration-confidence":
            guard let confidence = CalibrationConfidence.allCases.first(where: { $0.description == value }) else {
                throw fail("is not lowest, low, medium or high")
            }
            radioSettings.calibrationConfidence = confidence
        case "bus":
            switch value {
            case "system": bus = .system
            case "session": bus = .session
            case "none": bus = .none
            default:
                guard value.hasPrefix("unix:") || value.hasPrefix("tcp:") else { throw fail("is not system, session, none or a bus address (unix:path=...)") }
                bus = .address(value)
            }
        case "enable", "test-mode":
            guard let flag = ["true": true, "yes": true, "false": false, "no": false][value] else { throw fail("is not true or false") }
            if key == "enable" { enable = flag } else { testMode = flag }
        case "region":
            guard value.count <= 16, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw fail("is not a region code (letters, digits, - and _)")
            }
            region = value
        case "index-url", "export-base-url", "verification-url", "publish-url":
            guard value.hasPrefix("https://") || value.hasPrefix("http://"), value.count > 8, !value.contains(" ") else {
                throw fail("is not an http:// or https:// URL")
            }
            let url = value.hasSuffix("/") && key != "index-url" ? String(value.dropLast()) : value
            switch key {
            case "index-url": servers.indexURL = url
            case "export-base-url": servers.exportBaseURL = url
            case "verification-url": servers.verificationURL = url
            default: servers.publishURL = url
            }
        case "export-key":
            let parts = value.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].hasPrefix("/") else {
                throw fail("is not KEYID:VERSION:/path/to/public-key.pem")
            }
            servers.exportKeys.append(.init(id: parts[0], version: parts[1], path: parts[2]))
        case "exposure-configuration":
            guard value.hasPrefix("/") || ((value.hasPrefix("https://") || value.hasPrefix("http://")) && value.count > 8 && !value.contains(" "))
            else { throw fail("is neither an absolute path nor an http:// or https:// URL") }
            servers.exposureConfiguration = value
        case "detection-interval":
            guard let hours = Int(value), (1...24).contains(hours) else { throw fail("is not a number of hours in 1...24") }
            servers.detectionIntervalHours = hours
        case "verification-api-key":
            servers.verificationAPIKey = value
        case "health-authority-id":
            servers.healthAuthorityID = value
        default:
            throw DaemonConfigurationError(key: key, problem: "not a configuration key (\(Self.keys.joined(separator: ", ")))")
        }
    }

    /// `MIN-MAX` or a single number; nil for anything else. Empty parts are kept, so that `-`, `5-`
    /// and `-5` are refused rather than read as a number (or indexed past an empty split).
    static func range(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let low = Int(first) else { return nil }
        let high = parts.count == 2 ? Int(parts[1]) : low
        guard let high, low <= high else { return nil }
        return low...high
    }
}

/// A configuration value that is wrong, named by its key. gaend exits 2 with it.
public struct DaemonConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var key: String
    public var problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }
}

extension String {
    func trimmingWhitespace() -> String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

extension DaemonConfiguration {
    /// Every key with its effective value, in `keys` order (export keys one line each; the API key
    /// masked), for `gaenctl config show`.
    public func describedValues() -> [(key: String, value: String)] {
        func range(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)-\(range.upperBound)" }
        let bus: String =
            switch self.bus {
            case .system: "system"
            case .session: "session"
            case .none: "none"
            case .address(let address): address
            }
        var values: [(String, String)] = [
            ("radio", "\(radio)"), ("data-dir", dataDirectory), ("scan-window", "\(radioSettings.scanWindowSeconds)"),
            ("scan-interval", radioSettings.scanInterval.map(range) ?? "continuous"), ("rotation-interval", range(radioSettings.rotationInterval)),
            ("tx-power", radioSettings.txPower.map { "\($0)" } ?? "(the controller's)"), ("rssi-correction", "\(radioSettings.rssiCorrection)"),
            ("calibration-confidence", "\(radioSettings.calibrationConfidence)"), ("bus", bus), ("enable", "\(enable)"), ("region", region),
            ("test-mode", "\(testMode)"), ("index-url", servers.indexURL ?? "(none)"),
            ("export-base-url", servers.exportBaseURL ?? (servers.indexURL == nil ? "(none)" : "(from index-url and its lines)")),
        ]
        values += servers.exportKeys.map { ("export-key", "\($0.id):\($0.version):\($0.path)") }
        values += [
            ("exposure-configuration", servers.exposureConfiguration ?? "(built in)"), ("detection-interval", "\(servers.detectionIntervalHours)"),
            ("verification-url", servers.verificationURL ?? "(none)"),
            ("verification-api-key", servers.verificationAPIKey.isEmpty ? "(none)" : "(set, \(servers.verificationAPIKey.count) characters)"),
            ("publish-url", servers.publishURL ?? "(none)"), ("health-authority-id", servers.healthAuthorityID),
        ]
        return values
    }
}
