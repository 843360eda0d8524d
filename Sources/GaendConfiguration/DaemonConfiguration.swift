// SPDX-License-Identifier: GPL-3.0-or-later

/// The daemon's configuration: `/etc/gaend/gaend.conf` (`key = value` lines, `#` comments), then
/// the command line, whose options have the same names and win.
package struct DaemonConfiguration: Sendable {
    package var radio: RadioSpec = .none
    package var dataDirectory = "/var/lib/gaend"
    package var radioSettings = RadioSettings()
    /// Where Manager1 is served: the system bus by default.
    package var bus: ManagerBus = .system
    /// Enable Exposure Notification at start, recording consent (a beacon set up by its owner).
    package var enable = false
    package var region = ""
    package var testMode = false
    /// The least severe level logged (`log-level`); changed by a reload without a restart.
    package var logLevel = LogLevelName.info
    /// Who vouches for the wall clock (`clock`): the kernel's synchronization, or the owner.
    package var clock = ClockSetting.synchronized
    /// A program run when an exposure day is added and when the last one ages out (`exposure-hook`).
    package var exposureHook: String?
    /// How long it may run before it is killed (`exposure-hook-timeout`).
    package var exposureHookTimeoutSeconds = 30
    /// The group whose members read the exposure answer over D-Bus (`owner-group`): the D-Bus
    /// policy's group.
    package var ownerGroup = "gaend"
    /// The status LED (`indicator-led`): a name under /sys/class/leds.
    package var indicatorLED: String?
    package var servers = ServerSettings()

    package enum ClockSetting: String, Sendable, CaseIterable {
        /// Trusted while a time daemon keeps the kernel's clock synchronized.
        case synchronized
        /// The system clock as set at boot (a battery-backed RTC, a manual setting).
        case system
    }

    /// The key server, the verification server and the exposure configuration.
    package struct ServerSettings: Sendable, Equatable {
        package var indexURL: String?
        package var exportBaseURL: String?
        /// Trusted export signing keys: key id, version, PEM file.
        package var exportKeys: [ExportKey] = []
        /// A file path, or an http(s) URL the health authority serves it from.
        package var exposureConfiguration: String?
        package var detectionIntervalHours = 4
        /// How long one request to the key server may take, whole (`download-timeout`).
        package var downloadTimeoutSeconds = 60
        package var verificationURL: String?
        package var verificationAPIKey = ""
        package var publishURL: String?
        package var healthAuthorityID = ""

        package struct ExportKey: Sendable, Equatable {
            package var id: String
            package var version: String
            package var path: String
        }

        package var exposureConfigurationIsURL: Bool {
            exposureConfiguration.map { $0.hasPrefix("https://") || $0.hasPrefix("http://") } ?? false
        }

        /// The server keys set to a plain `http://` URL, by name. Anyone on the path can then
        /// change what they answer, and the key server's `Date` is a witness to the clock: a forged
        /// one keeps the beacon silent (docs/clock.md, "Over plain HTTP").
        package var plainHTTPKeys: [String] {
            [
                ("index-url", indexURL), ("export-base-url", exportBaseURL),
                ("exposure-configuration", exposureConfigurationIsURL ? exposureConfiguration : nil), ("verification-url", verificationURL),
                ("publish-url", publishURL),
            ].compactMap { key, value in value.map { $0.lowercased().hasPrefix("http://") } == true ? key : nil }
        }
    }

    package init() {}

    /// Applies `key = value` lines of a configuration file.
    package mutating func apply(file text: String, path: String) throws(DaemonConfigurationError) {
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                // Named by its first word only: the rest may be a secret written without its `=`.
                let word = String(trimmed.prefix { !$0.isWhitespace }.prefix(40))
                throw DaemonConfigurationError(key: word, problem: "expected key = value", location: "\(path):\(number + 1)")
            }
            do {
                try set(String(trimmed[..<equals]).trimmingWhitespace(), String(trimmed[trimmed.index(after: equals)...]).trimmingWhitespace())
            } catch {
                throw DaemonConfigurationError(key: error.key, problem: error.problem, location: "\(path):\(number + 1)")
            }
        }
    }

    /// Sets one key; the error names it.
    package mutating func set(_ key: String, _ value: String) throws(DaemonConfigurationError) {
        guard let entry = ConfigurationKey.named(key) else {
            throw DaemonConfigurationError(key: key, problem: "not a configuration key (\(Self.keys.joined(separator: ", ")))")
        }
        try entry.apply(&self, ConfigurationKey.Value(key: key, text: value))
    }

    /// The keys a file or the command line may set, in the order `config show` lists them.
    package static var keys: [String] { ConfigurationKey.all.map(\.name) }

    /// Every key with its effective value, in `keys` order (a repeatable key one line per value;
    /// the API key masked), for `gaenctl config show`.
    package func describedValues() -> [(key: String, value: String)] {
        ConfigurationKey.all.flatMap { entry in entry.describe(self).map { (key: entry.name, value: $0) } }
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
package struct DaemonConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    package var key: String
    package var problem: String
    /// Where in a file, `PATH:LINE`, when the value came from one.
    package var location: String?

    package init(key: String, problem: String, location: String? = nil) {
        self.key = key
        self.problem = problem
        self.location = location
    }

    /// `PATH:LINE: key: problem`, as compilers say where, or `key: problem`.
    package var description: String { (location.map { "\($0): " } ?? "") + "\(key): \(problem)" }
}

extension String {
    func trimmingWhitespace() -> String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// Where gaend serves Manager1.
package enum ManagerBus: Sendable, Equatable, CustomStringConvertible {
    case system, session, none
    /// A bus address (`unix:path=...`, `tcp:...`).
    case address(String)

    package var description: String {
        switch self {
        case .system: "system"
        case .session: "session"
        case .none: "none"
        case .address(let address): address
        }
    }
}

/// swift-log's levels by their names (GaendAPI does not link swift-log; gaend maps them).
package enum LogLevelName: String, CaseIterable, Sendable {
    case trace, debug, info, notice, warning, error, critical
}
