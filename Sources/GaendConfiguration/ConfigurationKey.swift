// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// One key of gaend's configuration: its name (in `gaend.conf` and as `--name` on gaend's command
/// line), what it takes, how a value is checked and set, and how the effective value is shown.
/// The table below is the only place a key is written: gaend's options, the file's keys and
/// `gaenctl config show` all read it.
package struct ConfigurationKey: Sendable {
    /// A value as given, with the key it was given for, so that errors name both.
    package struct Value: Sendable {
        package let key: String
        package let text: String

        func fail(_ problem: String) -> DaemonConfigurationError { DaemonConfigurationError(key: key, problem: "'\(text)' \(problem)") }
    }

    package let name: String
    /// What the value is and its default, for `gaend --help`.
    package let help: String
    /// Given more than once, each value counts (`export-key`); otherwise the last one wins.
    package let repeatable: Bool
    let apply: @Sendable (inout DaemonConfiguration, Value) throws(DaemonConfigurationError) -> Void
    /// The effective values, as `config show` prints them (several lines for a repeatable key).
    let describe: @Sendable (DaemonConfiguration) -> [String]

    init(
        _ name: String, _ help: String, repeatable: Bool = false,
        set apply: @escaping @Sendable (inout DaemonConfiguration, Value) throws(DaemonConfigurationError) -> Void,
        show describe: @escaping @Sendable (DaemonConfiguration) -> [String]
    ) {
        self.name = name
        self.help = help
        self.repeatable = repeatable
        self.apply = apply
        self.describe = describe
    }

    package static func named(_ name: String) -> ConfigurationKey? { all.first { $0.name == name } }

    /// An http:// or https:// URL, without a trailing slash unless `keepSlash`.
    static func url(_ value: Value, keepSlash: Bool = false) throws(DaemonConfigurationError) -> String {
        let text = value.text
        guard text.hasPrefix("https://") || text.hasPrefix("http://"), text.count > 8, !text.contains(" ") else {
            throw value.fail("is not an http:// or https:// URL")
        }
        return text.hasSuffix("/") && !keepSlash ? String(text.dropLast()) : text
    }

    static func flag(_ value: Value) throws(DaemonConfigurationError) -> Bool {
        let flags = ["true": true, "yes": true, "on": true, "1": true, "false": false, "no": false, "off": false, "0": false]
        guard let flag = flags[value.text.lowercased()] else { throw value.fail("is not true or false (yes/no, on/off, 1/0)") }
        return flag
    }

    static func range(_ value: Value) throws(DaemonConfigurationError) -> ClosedRange<Int> {
        guard let range = DaemonConfiguration.range(value.text), range.lowerBound >= 1, range.upperBound <= 3600 else {
            throw value.fail("is not MIN-MAX seconds within 1...3600")
        }
        return range
    }

    static func shown(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)-\(range.upperBound)" }

    /// The keys a reload (SIGHUP) applies at once; a change to any other waits for a restart (the
    /// radio, the bus and the data directory are opened once; the detection worker is built once;
    /// `enable` acts at start). `exposure-configuration` is read again and checked before a reload
    /// is applied: one gaend cannot read refuses the whole reload.
    package static let appliedOnReload: Set<String> = [
        "region", "log-level", "test-mode", "verification-url", "verification-api-key", "publish-url", "health-authority-id",
        "exposure-configuration", "exposure-hook", "exposure-hook-timeout",
    ]

    /// The keys `reloaded` changed that a reload does not apply, in `all` order. Against what
    /// runs: a key changed back by a second reload no longer waits.
    package static func waitingForRestart(started: DaemonConfiguration, reloaded: DaemonConfiguration) -> [String] {
        all.filter { !appliedOnReload.contains($0.name) && $0.describe(started) != $0.describe(reloaded) }.map(\.name)
    }

    /// The values gaend runs with after reloading `reloaded`: the reloadable keys' new values, the
    /// others' values at start (their changes wait for a restart).
    package static func runningValues(started: DaemonConfiguration, reloaded: DaemonConfiguration) -> [(key: String, value: String)] {
        all.flatMap { key in key.describe(appliedOnReload.contains(key.name) ? reloaded : started).map { (key: key.name, value: $0) } }
    }

    /// Every key, in the order `config show` lists them.
    package static let all: [ConfigurationKey] = [
        ConfigurationKey("radio", "The radio: hci:hciN, bluez:hciN, h4:/dev/ttyX[@baud], h4+unix:PATH, h4+tcp:HOST:PORT or none (default none).") {
            (configuration, value) throws(DaemonConfigurationError) in
            do throws(RadioSpecError) {
                configuration.radio = try RadioSpec(parsing: value.text)
            } catch {
                throw DaemonConfigurationError(key: value.key, problem: error.problem)
            }
        } show: {
            ["\($0.radio)"]
        },
        ConfigurationKey("data-dir", "The data directory (default /var/lib/gaend).") { (configuration, value) throws(DaemonConfigurationError) in
            guard value.text.hasPrefix("/") else { throw value.fail("is not an absolute path") }
            configuration.dataDirectory = value.text
        } show: {
            [$0.dataDirectory]
        },
        ConfigurationKey("scan-window", "Seconds each scan window lasts (default 4).") { (configuration, value) throws(DaemonConfigurationError) in
            guard let seconds = Double(value.text), seconds > 0, seconds <= 60 else { throw value.fail("is not a number of seconds in (0, 60]") }
            configuration.radioSettings.scanWindowSeconds = seconds
        } show: {
            ["\($0.radioSettings.scanWindowSeconds)"]
        },
        ConfigurationKey("scan-interval", "Seconds between scan windows, MIN-MAX (default 210-300), or continuous.") {
            (configuration, value) throws(DaemonConfigurationError) in
            if value.text == "continuous" {
                configuration.radioSettings.scanInterval = nil
            } else {
                guard let range = DaemonConfiguration.range(value.text), range.lowerBound >= 1, range.upperBound <= 3600 else {
                    throw value.fail("is not MIN-MAX seconds within 1...3600, or continuous")
                }
                configuration.radioSettings.scanInterval = range
            }
        } show: {
            [$0.radioSettings.scanInterval.map(shown) ?? "continuous"]
        },
        ConfigurationKey("rotation-interval", "Seconds between address and RPI rotations, MIN-MAX (default 600-1200).") {
            (configuration, value) throws(DaemonConfigurationError) in
            configuration.radioSettings.rotationInterval = try range(value)
        } show: {
            [shown($0.radioSettings.rotationInterval)]
        },
        ConfigurationKey("tx-power", "TX power to advertise in the metadata, dBm (default: the controller's).") {
            (configuration, value) throws(DaemonConfigurationError) in
            guard let power = Int8(value.text), (-127...20).contains(power) else { throw value.fail("is not a TX power in -127...20 dBm") }
            configuration.radioSettings.txPower = power
        } show: {
            [$0.radioSettings.txPower.map { "\($0)" } ?? "(the controller's)"]
        },
        ConfigurationKey("rssi-correction", "Added to every RSSI heard, dB (default 0).") { (configuration, value) throws(DaemonConfigurationError) in
            guard let correction = Int(value.text), (-50...50).contains(correction) else { throw value.fail("is not a correction in -50...50 dB") }
            configuration.radioSettings.rssiCorrection = correction
        } show: {
            ["\($0.radioSettings.rssiCorrection)"]
        },
        ConfigurationKey("calibration-confidence", "Calibration confidence to advertise: lowest, low, medium or high (default lowest).") {
            (configuration, value) throws(DaemonConfigurationError) in
            guard let confidence = CalibrationConfidence.allCases.first(where: { $0.description == value.text }) else {
                throw value.fail("is not lowest, low, medium or high")
            }
            configuration.radioSettings.calibrationConfidence = confidence
        } show: {
            ["\($0.radioSettings.calibrationConfidence)"]
        },
        ConfigurationKey("bus", "Where to serve org.gaend.Manager1: system (default), session, none or a bus address.") {
            (configuration, value) throws(DaemonConfigurationError) in
            switch value.text {
            case "system": configuration.bus = .system
            case "session": configuration.bus = .session
            case "none": configuration.bus = .none
            default:
                guard value.text.hasPrefix("unix:") || value.text.hasPrefix("tcp:") else {
                    throw value.fail("is not system, session, none or a bus address (unix:path=...)")
                }
                configuration.bus = .address(value.text)
            }
        } show: {
            ["\($0.bus)"]
        },
        ConfigurationKey("enable", "true: enable Exposure Notification at start, recording the owner's consent (default false).") {
            (configuration, value) throws(DaemonConfigurationError) in
            configuration.enable = try flag(value)
        } show: {
            ["\($0.enable)"]
        },
        ConfigurationKey("region", "The health authority's region (shown in the API).") { (configuration, value) throws(DaemonConfigurationError) in
            guard value.text.count <= 16, value.text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw value.fail("is not a region code (letters, digits, - and _)")
            }
            configuration.region = value.text
        } show: {
            [$0.region]
        },
        ConfigurationKey("log-level", "The least severe log level written: trace, debug, info, notice, warning, error or critical (default info).") {
            (configuration, value) throws(DaemonConfigurationError) in
            guard let level = LogLevelName(rawValue: value.text) else { throw value.fail("is not trace, debug, info, notice, warning, error or critical") }
            configuration.logLevel = level
        } show: {
            [$0.logLevel.rawValue]
        },
        ConfigurationKey(
            "clock",
            "Who vouches for the wall clock: synchronized (while a time daemon keeps the kernel synchronized; default) or system (the clock as set at boot: an RTC, a manual setting). Either way the key server's Date more than 2 h away makes it untrusted."
        ) { (configuration, value) throws(DaemonConfigurationError) in
            guard let setting = DaemonConfiguration.ClockSetting(rawValue: value.text) else { throw value.fail("is not synchronized or system") }
            configuration.clock = setting
        } show: {
            [$0.clock.rawValue]
        },
        ConfigurationKey("test-mode", "true: allow GetTestDiagnosisKeys (default false).") { (configuration, value) throws(DaemonConfigurationError) in
            configuration.testMode = try flag(value)
        } show: {
            ["\($0.testMode)"]
        },
        ConfigurationKey("index-url", "The key server's index.txt URL.") { (configuration, value) throws(DaemonConfigurationError) in
            configuration.servers.indexURL = try url(value, keepSlash: true)
        } show: {
            [$0.servers.indexURL ?? "(none)"]
        },
        ConfigurationKey("export-base-url", "The URL the index's paths are relative to (default: from the index URL and its lines).") {
            (configuration, value) throws(DaemonConfigurationError) in
            configuration.servers.exportBaseURL = try url(value)
        } show: {
            [$0.servers.exportBaseURL ?? ($0.servers.indexURL == nil ? "(none)" : "(from index-url and its lines)")]
        },
        ConfigurationKey("export-key", "A trusted export signing key: KEYID:VERSION:/path/to/public.pem (repeatable).", repeatable: true) {
            (configuration, value) throws(DaemonConfigurationError) in
            let parts = value.text.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].hasPrefix("/") else {
                throw value.fail("is not KEYID:VERSION:/path/to/public-key.pem")
            }
            configuration.servers.exportKeys.append(.init(id: parts[0], version: parts[1], path: parts[2]))
        } show: {
            $0.servers.exportKeys.map { "\($0.id):\($0.version):\($0.path)" }
        },
        ConfigurationKey(
            "exposure-configuration", "The exposure configuration: a JSON file, or an http(s) URL fetched before each detection (default: v2 defaults)."
        ) { (configuration, value) throws(DaemonConfigurationError) in
            let text = value.text
            guard text.hasPrefix("/") || ((text.hasPrefix("https://") || text.hasPrefix("http://")) && text.count > 8 && !text.contains(" ")) else {
                throw value.fail("is neither an absolute path nor an http:// or https:// URL")
            }
            configuration.servers.exposureConfiguration = text
        } show: {
            [$0.servers.exposureConfiguration ?? "(built in)"]
        },
        ConfigurationKey("detection-interval", "Hours between scheduled detections (default 4).") { (configuration, value) throws(DaemonConfigurationError) in
            guard let hours = Int(value.text), (1...24).contains(hours) else { throw value.fail("is not a number of hours in 1...24") }
            configuration.servers.detectionIntervalHours = hours
        } show: {
            ["\($0.servers.detectionIntervalHours)"]
        },
        ConfigurationKey(
            "download-timeout",
            "Seconds one request to the key server may take, whole, before it is given up and tried again (default 60): a server that trickles its answer does not reset it."
        ) { (configuration, value) throws(DaemonConfigurationError) in
            guard let seconds = Int(value.text), (1...600).contains(seconds) else { throw value.fail("is not a number of seconds in 1...600") }
            configuration.servers.downloadTimeoutSeconds = seconds
        } show: {
            ["\($0.servers.downloadTimeoutSeconds)"]
        },
        ConfigurationKey(
            "exposure-hook",
            "A program (absolute path) run, without a shell and with only GAEND_* variables, when a detection adds an exposure day and when the last one ages out of the 14 days; the answer as JSON on its standard input."
        ) { (configuration, value) throws(DaemonConfigurationError) in
            guard value.text.hasPrefix("/"), !value.text.contains("\0") else { throw value.fail("is not an absolute path") }
            configuration.exposureHook = value.text
        } show: {
            [$0.exposureHook ?? "(none)"]
        },
        ConfigurationKey("exposure-hook-timeout", "Seconds the exposure hook may run before it is killed (default 30).") {
            (configuration, value) throws(DaemonConfigurationError) in
            guard let seconds = Int(value.text), (1...600).contains(seconds) else { throw value.fail("is not a number of seconds in 1...600") }
            configuration.exposureHookTimeoutSeconds = seconds
        } show: {
            ["\($0.exposureHookTimeoutSeconds)"]
        },
        ConfigurationKey(
            "owner-group",
            "The group whose members (beside root and gaend's user) may read the exposure answer over D-Bus: ExposureDays, LastExposureTime and the classification (default gaend, the D-Bus policy's group)."
        ) { (configuration, value) throws(DaemonConfigurationError) in
            guard !value.text.isEmpty, value.text.count <= 64, value.text.allSatisfy({ $0.isLetter || $0.isNumber || "_-.".contains($0) }) else {
                throw value.fail("is not a group name")
            }
            configuration.ownerGroup = value.text
        } show: {
            [$0.ownerGroup]
        },
        ConfigurationKey(
            "indicator-led",
            "An LED of /sys/class/leds (ACT: the Pi's activity LED) that shows the beacon's state: a short blink every 3 s on the air, fast blinking while an exposure is in the last 14 days, a blink every 10 s waiting for the clock, off when not working."
        ) { (configuration, value) throws(DaemonConfigurationError) in
            guard !value.text.isEmpty, value.text.count <= 64, !value.text.contains("/"), value.text != ".", value.text != ".." else {
                throw value.fail("is not the name of an LED in /sys/class/leds")
            }
            configuration.indicatorLED = value.text
        } show: {
            [$0.indicatorLED ?? "(none)"]
        },
        ConfigurationKey("verification-url", "The verification server's base URL.") { (configuration, value) throws(DaemonConfigurationError) in
            configuration.servers.verificationURL = try url(value)
        } show: {
            [$0.servers.verificationURL ?? "(none)"]
        },
        ConfigurationKey("verification-api-key", "The verification server's device API key.") { (configuration, value) throws(DaemonConfigurationError) in
            configuration.servers.verificationAPIKey = value.text
        } show: {
            [$0.servers.verificationAPIKey.isEmpty ? "(none)" : "(set, \($0.servers.verificationAPIKey.count) characters)"]
        },
        ConfigurationKey("publish-url", "The key server's publish URL.") { (configuration, value) throws(DaemonConfigurationError) in
            configuration.servers.publishURL = try url(value)
        } show: {
            [$0.servers.publishURL ?? "(none)"]
        },
        ConfigurationKey("health-authority-id", "The health authority ID the key server knows this app by.") {
            (configuration, value) throws(DaemonConfigurationError) in
            configuration.servers.healthAuthorityID = value.text
        } show: {
            [$0.servers.healthAuthorityID]
        },
    ]
}
