// SPDX-License-Identifier: GPL-3.0-or-later

package import ClockTrust
package import Conditions
package import ContactLog
package import Detection
import Foundation
package import ENCore
package import GaendAPI
package import GaendConfiguration
package import KeyFiles
package import KeySchedule
package import Logging
package import Beacon
package import Storage
package import OwnerSignals

/// What Manager1 does, without D-Bus: the owner's state, key release, detection, test results,
/// sharing and reset. One actor owns the owner state; the key schedule, the contact log and the
/// detection worker are actors of their own.
package actor Manager {
    package struct Settings: Sendable {
        package var region = ""
        package var testMode = false
        /// The radio as `radio =` names it, typed (issue 48: it was a string compared with "none").
        package var radio = RadioSpec.none
        /// The key server's index URL; empty when none is configured.
        package var keyServer = ""
        package var sharing: SharingSettings?
        /// The configuration as last read, for GetConfiguration.
        package var running = RunningConfiguration()
        package init() {}
    }

    /// The configuration gaend runs with: the file it read (empty when none), every key's value
    /// (the API key masked) and the keys a reload changed that wait for a restart.
    package struct RunningConfiguration: Sendable {
        package var file = ""
        package var values: [(key: String, value: String)] = []
        package var restartPending: [String] = []
        package init(file: String = "", values: [(key: String, value: String)] = [], restartPending: [String] = []) {
            self.file = file
            self.values = values
            self.restartPending = restartPending
        }
    }

    /// Where test results are verified and keys published.
    package struct SharingSettings: Sendable {
        package var verificationURL: String
        package var apiKey: String
        package var publishURL: String
        package var healthAuthorityID: String
        package init(verificationURL: String, apiKey: String, publishURL: String, healthAuthorityID: String) {
            self.verificationURL = verificationURL
            self.apiKey = apiKey
            self.publishURL = publishURL
            self.healthAuthorityID = healthAuthorityID
        }
    }

    static let preAuthorizationLifetime: Int64 = 5 * 86_400

    let dataDirectory: DataDirectory
    let keys: KeySchedule
    let log: ContactLogWriter
    /// Sightings heard on an untrusted clock, waiting for it (nil in tests without them).
    let held: HeldSightings?
    let worker: DetectionWorker?
    let radioStatus: RadioStatusBoard
    let onAir: OnAirBoard
    let gate: EnablementGate
    let clock: any WallClock
    /// The clock's verdict and witness (nil: `clock` alone says whether it is trusted).
    let clockTrust: ClockTrustBoard?
    let transport: any HTTPTransport
    let logger: Logger
    var settings: Settings
    var owner: OwnerState
    /// Signalled by a reload: the settings shown as properties (Region, KeyServer) may differ.
    nonisolated let reloaded = Changes()

    package init(
        dataDirectory: DataDirectory, keys: KeySchedule, log: ContactLogWriter, worker: DetectionWorker?, radioStatus: RadioStatusBoard,
        gate: EnablementGate, settings: Settings, clock: any WallClock, transport: any HTTPTransport = CurlTransport(),
        onAir: OnAirBoard = OnAirBoard(), clockTrust: ClockTrustBoard? = nil, held: HeldSightings? = nil,
        logger: Logger = Logger(label: "gaend.manager")
    ) throws(ManagerError) {
        self.held = held
        self.onAir = onAir
        self.clockTrust = clockTrust
        self.dataDirectory = dataDirectory
        self.keys = keys
        self.log = log
        self.worker = worker
        self.radioStatus = radioStatus
        self.gate = gate
        self.settings = settings
        self.clock = clock
        self.transport = transport
        self.logger = logger
        let loaded = OwnerState.load(from: dataDirectory)
        owner = loaded.state
        if let problem = loaded.problem { logger.error("the owner's settings", metadata: ["problem": "\(problem)"]) }
        gate.set(owner.enabled)
    }

    /// Settings that a reload (SIGHUP) may change; Manager1 announces what they changed.
    package func reload(_ settings: Settings) {
        self.settings = settings
        reloaded.signal()
    }

    /// Whose notices say that a property may have changed: a reload, the log's activity, what is
    /// on the air, the detection store. (The radio status and the owner's switch are followed apart;
    /// method calls announce their own changes.)
    package nonisolated var changeSources: [Changes] {
        [reloaded, log.changes, onAir.changes] + (worker.map { [$0.changes] } ?? []) + (clockTrust.map { [$0.changes] } ?? [])
            + (held.map { [$0.changes] } ?? [])
    }

    /// Refuses what would keep, release or broadcast something on a clock that cannot be trusted.
    func requireTrustedClock() throws(ManagerError) {
        if let distrust = clock.distrust { throw .clockUntrusted(distrust) }
    }

    /// When a property next changes by time alone: UTC midnight (SightingsToday, ExposureDays,
    /// LastExposureTime) or the detection budget's next release (DetectionsRemaining).
    package func nextTimedChange() async -> UnixTime {
        let midnight = UTCDay(containing: clock.now()).start.adding(seconds: 86_400)
        guard let release = await worker?.store.current().budgetRelease else { return midnight }
        return min(midnight, release)
    }

    /// The configuration file enables Exposure Notification (`enable = true`): consent given by
    /// whoever set the beacon up, as a first SetEnabled(true) would record it.
    package func enableFromConfiguration() throws(ManagerError) {
        guard !owner.enabled else { return }
        try setEnabled(true)
        logger.notice("exposure notification enabled by the configuration (enable = true)")
    }

    package func setEnabled(_ enabled: Bool) throws(ManagerError) {
        var next = owner
        next.enabled = enabled
        if owner.authorization == .unknown { next.authorization = enabled ? .authorized : .notAuthorized }
        if enabled { next.authorization = .authorized }
        try next.save(to: dataDirectory)
        owner = next
        gate.set(enabled)
        // The caller's audit line (ManagerObject) is the notice; this is the detail.
        logger.info("exposure notification \(enabled ? "enabled" : "disabled")")
    }

    private func requireAuthorized() throws(ManagerError) {
        guard owner.authorization == .authorized else {
            throw .notEnabled("Exposure Notification was never enabled on this device (gaenctl enable)")
        }
    }

    /// The key history for sharing (the current key cut short and replaced).
    package func diagnosisKeys() async throws(ManagerError) -> [TemporaryExposureKey] {
        try requireAuthorized()
        try requireTrustedClock()
        do {
            return try await keys.releaseDiagnosisKeys()
        } catch {
            throw .internal("releasing keys: \(error)")
        }
    }

    package func testDiagnosisKeys() async throws(ManagerError) -> [TemporaryExposureKey] {
        guard settings.testMode else { throw .notSupported("test keys need test-mode = true in the configuration") }
        try requireAuthorized()
        try requireTrustedClock()
        do {
            return try await keys.testDiagnosisKeys()
        } catch {
            throw .internal("reading keys: \(error)")
        }
    }

    package func preAuthorize() throws(ManagerError) {
        try requireAuthorized()
        try requireTrustedClock()
        var next = owner
        next.preAuthorizedAt = clock.now()
        try next.save(to: dataDirectory)
        owner = next
    }

    /// Uses up a pre-authorization younger than 5 days and releases the keys.
    package func requestPreAuthorizedKeys() async throws(ManagerError) -> [TemporaryExposureKey] {
        try requireAuthorized()
        try requireTrustedClock()
        guard let at = owner.preAuthorizedAt, clock.now().seconds - at.seconds <= Self.preAuthorizationLifetime else {
            throw .notAuthorized("no key release was pre-authorized in the last 5 days (PreAuthorizeDiagnosisKeys)")
        }
        var next = owner
        next.preAuthorizedAt = nil
        try next.save(to: dataDirectory)
        owner = next
        return try await diagnosisKeys()
    }

    // MARK: Detection

    private func configuration(_ json: String) throws(ManagerError) -> ExposureConfiguration? {
        guard !json.isEmpty else { return nil }
        do {
            return try ExposureConfiguration(json: Data(json.utf8))
        } catch {
            throw .badParameter(field: error.key.isEmpty ? "configuration" : error.key, problem: error.problem)
        }
    }

    private func requireWorker() throws(ManagerError) -> DetectionWorker {
        guard let worker, worker.canDownload else { throw .notConfigured("no key server is configured (index-url)") }
        return worker
    }

    /// A detection now; its result as JSON.
    package func detect(configurationJSON: String) async throws(ManagerError) -> String {
        let worker = try requireWorker()
        let configuration = try configuration(configurationJSON)
        do {
            return try await worker.runNow(configuration: configuration).json.serialized()
        } catch {
            switch error {
            case .rateLimited(let next): throw .rateLimited(nextAllowed: next)
            case .busy: throw .inProgress("a detection is already running")
            case .clockUntrusted(let reason): throw .clockUntrusted(reason)
            default: throw .detectionFailed(error)
            }
        }
    }

    /// Every stored window of the last 14 days, under the configured configuration.
    package func exposureWindows() async -> String {
        guard let worker else { return "[]" }
        return await worker.store.rescore().json.member("windows")?.serialized() ?? "[]"
    }

    /// The daily summaries of every stored window under `configurationJSON` (the configured one
    /// when empty). Without a key server nothing was ever matched: an empty list, as for windows.
    package func dailySummaries(configurationJSON: String) async throws(ManagerError) -> String {
        let configuration = try configuration(configurationJSON)
        guard let worker else { return "[]" }
        return await worker.store.rescore(configuration).json.member("daily_summaries")?.serialized() ?? "[]"
    }

    /// What the beacon heard from `since` (unix seconds; at most 14 days back) to now, as JSON
    /// (`HeardSummary`). Counts only. Read off the actor: a long log does not hold up other calls.
    nonisolated package func heard(since: UInt64) async throws(ManagerError) -> String {
        let now = clock.now()
        let start = UnixTime(exactlySeconds: since).map { min($0, now) } ?? now
        do {
            var summary = try HeardSummary(reader: ContactLogReader(dataDirectory: dataDirectory), since: start, until: now)
            summary.held = await held?.count.aggregates ?? 0
            return summary.json.serialized()
        } catch {
            throw .internal("the contact log could not be read: \(error)")
        }
    }

    package func runningConfiguration() -> RunningConfiguration { settings.running }

    // MARK: Test results

    package func addTestResult(testDate: UnixTime, kind: TestResult.Kind, symptomOnset: UnixTime?) throws(ManagerError) -> String {
        try requireTrustedClock()
        let now = clock.now()
        guard testDate.seconds <= now.seconds + 86_400, testDate.seconds >= now.seconds - 30 * 86_400 else {
            throw .badParameter(field: Manager1.TestResultField.testDate.rawValue, problem: "\(testDate) is not within the last 30 days")
        }
        if let symptomOnset, symptomOnset.seconds > now.seconds + 86_400 || symptomOnset.seconds < now.seconds - 30 * 86_400 {
            throw .badParameter(field: Manager1.TestResultField.symptomOnset.rawValue, problem: "\(symptomOnset) is not within the last 30 days")
        }
        guard owner.testResults.count < OwnerState.maximumTestResults else {
            throw .failed("\(OwnerState.maximumTestResults) test results are recorded, the most gaend keeps; ResetAllData starts afresh")
        }
        let id = "t\(now.seconds)-\(owner.testResults.count + 1)"
        var next = owner
        next.testResults.append(TestResult(id: id, testDate: testDate, kind: kind, symptomOnset: symptomOnset, added: now, shared: false))
        try next.save(to: dataDirectory)
        owner = next
        return id
    }

    package func testResults() -> [TestResult] { owner.testResults }

    // MARK: Reset

    /// Keys, contact log, detection results, test results and consent: all gone.
    package func resetAll() async throws(ManagerError) {
        gate.set(false)
        do {
            try await keys.reset()
            try await log.eraseAll()
            try await worker?.store.reset()
            for name in [OwnerState.fileName] {
                try AtomicFile.remove(dataDirectory.path(of: name))
            }
        } catch {
            throw .internal("resetting: \(error)")
        }
        owner = OwnerState()
        logger.info("all data reset")
    }

    // MARK: Properties

    /// The status and, when it is not active, why (StatusReason), decided together; the
    /// exposure days with them.
    package func ownerStatus() async -> OwnerStatus {
        ownerStatus(await worker?.store.current() ?? DetectionSnapshot())
    }

    /// The status with detection's snapshot already asked for (`snapshot` asks the store once).
    private func ownerStatus(_ detection: DetectionSnapshot) -> OwnerStatus {
        let radio = radioStatus.status
        let (status, reason): (Manager1.Status, String) =
            if settings.radio == .none {
                (.paused, "no radio is configured (radio = none): detection only")
            } else if !owner.enabled {
                (.disabled, "Exposure Notification is turned off (gaenctl enable turns it on)")
            } else if radio == .bluetoothOff {
                (.bluetoothOff, radioStatus.reason ?? "the radio is off")
            } else if let distrust = clock.distrust {
                (.scanning, "scanning only, nothing is broadcast: \(distrust)")
            } else {
                switch radio {
                case .active: (.active, "")
                case .bluetoothOff: (.bluetoothOff, radioStatus.reason ?? "the radio is off")
                case .starting, .none: (.unknown, "the radio is starting")
                }
            }
        return OwnerStatus(status: status, reason: reason, exposureDays: detection.answer.days, detectionProblem: detection.lastError)
    }

    /// Manager1's properties now, assembled from what their owners hold in memory: no file is read.
    package func snapshot() async -> ManagerSnapshot {
        let detection = await worker?.store.current() ?? DetectionSnapshot()
        let owner = ownerStatus(detection)
        let radio = radioStatus.status
        return ManagerSnapshot(
            owner: owner, authorization: self.owner.authorization.rawValue, enabled: self.owner.enabled, radio: settings.radio,
            advertising: self.owner.enabled && radio == .active,
            // What is on the air, only while it is: after a fault the advertiser is not asked to stop.
            beacon: owner.status == .active ? onAir.value : nil, log: await log.activity(), heldAggregates: await held?.count.aggregates ?? 0,
            detection: detection, keyServer: settings.keyServer, region: settings.region, clockTrusted: clock.distrust == nil,
            clockOffsetMilliseconds: clockTrust?.verdict.offsetMilliseconds ?? 0)
    }

    /// The values of Manager1's properties now.
    package func properties() async -> [Manager1.Property: PropertyValue] {
        let snapshot = await snapshot()
        return Dictionary(uniqueKeysWithValues: Manager1.Property.allCases.map { ($0, snapshot.value(of: $0)) })
    }

    /// A property value, kept free of D-Bus types.
    package enum PropertyValue: Equatable, Sendable {
        case string(String)
        case boolean(Bool)
        case time(UnixTime?)
        case count(Int)
        case signed(Int64)
        case strings([String])
    }
}
