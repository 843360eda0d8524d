// SPDX-License-Identifier: GPL-3.0-or-later

package import DBus
package import Detection
import ENCore
import GaendAPI
package import Logging
import Synchronization

/// org.gaend.Manager1 at /org/gaend/Manager: the table of methods, properties and signals
/// (docs/org.gaend.Manager1.rst), over a `Manager`.
package struct ManagerObject: Sendable {

    let manager: Manager
    let bus: DBusConnection
    let authorizer: Authorizer
    let readers: PrivateReaders
    /// The properties last published (Get and GetAll read them), and a refresh of them.
    let properties: @Sendable () -> ManagerSnapshot
    let refresh: @Sendable () async -> Void
    /// The audit trail: one notice line per call that releases keys, shares, resets, enables or
    /// disables, or records a test result, with the caller's uid as the bus knows it.
    let audit: Logger
    /// Calls that failed for gaend's own reasons (a full disk, an unreadable file): at warning,
    /// so that `journalctl -p warning` shows why an action did nothing (issue 40).
    let logger = Logger(label: "gaend.dbus")

    package init(
        manager: Manager, bus: DBusConnection, readers: PrivateReaders, properties: @escaping @Sendable () -> ManagerSnapshot,
        refresh: @escaping @Sendable () async -> Void, audit: Logger = Logger(label: "gaend.audit")
    ) {
        self.manager = manager
        self.bus = bus
        self.readers = readers
        self.authorizer = Authorizer(bus: bus)
        self.properties = properties
        self.refresh = refresh
        self.audit = audit
    }

    static let keysType = DBusType.array(.structure([.array(.byte), .uint32, .uint32, .uint32]))

    static func keys(_ keys: [TemporaryExposureKey]) -> DBusValue {
        .array(
            element: .structure([.array(.byte), .uint32, .uint32, .uint32]),
            keys.map { .structure([.bytes($0.keyData.bytes), .uint32($0.rollingStartIntervalNumber.rawValue), .uint32($0.rollingPeriod), .uint32(0)]) })
    }

    /// Runs `body`, maps its failure to its D-Bus name, and publishes the properties it changed
    /// before the reply (BlueZ's adapter.c emits its PropertiesChanged so, inside the handler).
    /// With `audited`, one notice line records the action, the caller's uid and the outcome (and how
    /// many keys left, never the keys).
    ///
    /// Every method that returns health data or changes state checks its caller here, in gaend,
    /// whatever the bus policy let through (issue 53: with a permissive policy, user nobody turned
    /// Exposure Notification off and read the test results). The policy is the outer filter, as
    /// NetworkManager's and logind's are; the owner is root, gaend's user or the owner's group.
    private func perform(
        _ call: DBusMethodCall, audited action: String? = nil, _ body: () async throws(ManagerError) -> [DBusValue]
    ) async throws -> [DBusValue] {
        let outcome: Result<[DBusValue], ManagerError>
        do throws(ManagerError) {
            guard await readers.allows(call.sender) else {
                throw .notAuthorized(
                    "not authorized: \(call.message.member ?? "this call") is the owner's: run as root or join the gaend group")
            }
            let result = try await body()
            if let action { await record(action, call, outcome: "done", keys: action.hasPrefix("key release") ? result.first?.arrayElements?.count : nil) }
            outcome = .success(result)
        } catch {
            if let action { await record(action, call, outcome: error.dbusError.name.rawValue, keys: nil) }
            if case .internal(let message) = error {
                logger.warning("\(call.message.member ?? "a call") failed", metadata: ["error": "\(message)", "sender": "\(call.sender)"])
            }
            outcome = .failure(error)
        }
        await refresh()
        switch outcome {
        case .success(let values): return values
        case .failure(let error): throw error.dbusError
        }
    }

    private func record(_ action: String, _ call: DBusMethodCall, outcome: String, keys: Int?) async {
        let uid = (try? await CallerIdentity.uid(of: call.sender, on: bus)).flatMap { $0.map { "\($0)" } } ?? "unknown"
        var metadata: Logger.Metadata = ["uid": "\(uid)", "sender": "\(call.sender)", "outcome": "\(outcome)"]
        if let keys { metadata["keys"] = "\(keys)" }
        audit.notice("\(action)", metadata: metadata)
    }

    package var table: DBusInterface {
        let manager = manager
        let properties = properties
        let authorizer = authorizer
        let readers = readers
        let privateReader: @Sendable (String) async -> Bool = { await readers.allows($0) }
        let bus = bus
        return DBusInterface(
            name: Manager1.interface,
            methods: [
                DBusMethod(Manager1.Method.setEnabled.rawValue, inputs: [.init("enabled", .boolean)]) { call in
                    try await perform(call, audited: call.arguments[0].boolean == true ? "enable" : "disable") { () throws(ManagerError) in
                        try await manager.setEnabled(call.arguments[0].boolean ?? false)
                        return []
                    }
                },
                DBusMethod(Manager1.Method.getDiagnosisKeys.rawValue, outputs: [.init("keys", Self.keysType)]) { call in
                    try await perform(call, audited: "key release (GetDiagnosisKeys)") { () throws(ManagerError) in
                        try await authorizer.check(call.sender, .releaseKeys)
                        return [Self.keys(try await manager.diagnosisKeys())]
                    }
                },
                DBusMethod(Manager1.Method.getTestDiagnosisKeys.rawValue, outputs: [.init("keys", Self.keysType)]) { call in
                    try await perform(call, audited: "key release (GetTestDiagnosisKeys)") { () throws(ManagerError) in
                        try await authorizer.check(call.sender, .releaseKeys)
                        return [Self.keys(try await manager.testDiagnosisKeys())]
                    }
                },
                DBusMethod(Manager1.Method.preAuthorizeDiagnosisKeys.rawValue) { call in
                    try await perform(call, audited: "key release pre-authorized") { () throws(ManagerError) in
                        try await authorizer.check(call.sender, .releaseKeys)
                        try await manager.preAuthorize()
                        return []
                    }
                },
                DBusMethod(Manager1.Method.requestPreAuthorizedDiagnosisKeys.rawValue, outputs: [.init("keys", Self.keysType)]) { call in
                    try await perform(call, audited: "key release (RequestPreAuthorizedDiagnosisKeys)") { () throws(ManagerError) in
                        // The pre-authorization is the owner's consent: no second polkit check.
                        let keys = Self.keys(try await manager.requestPreAuthorizedKeys())
                        // To the caller alone: in the reply, and in a signal addressed to its unique
                        // name (Apple's handler). A signal without a destination goes to every
                        // connection with a match rule, whoever it belongs to.
                        try? bus.send(
                            .signal(
                                path: Manager1.objectPath, interface: Manager1.interface, member: Manager1.Signal.diagnosisKeysAvailable.rawValue, [keys],
                                destination: call.sender))
                        return [keys]
                    }
                },
                DBusMethod(Manager1.Method.detectExposures.rawValue, inputs: [.init("configuration", .string)], outputs: [.init("result", .string)]) { call in
                    try await perform(call) { () throws(ManagerError) in [.string(try await manager.detect(configurationJSON: call.arguments[0].string ?? ""))]
                    }
                },
                DBusMethod(Manager1.Method.getExposureWindows.rawValue, outputs: [.init("windows", .string)]) { call in
                    try await perform(call) { () throws(ManagerError) in [.string(await manager.exposureWindows())] }
                },
                DBusMethod(Manager1.Method.getDailySummaries.rawValue, inputs: [.init("configuration", .string)], outputs: [.init("summaries", .string)]) {
                    call in
                    try await perform(call) { () throws(ManagerError) in
                        [.string(try await manager.dailySummaries(configurationJSON: call.arguments[0].string ?? ""))]
                    }
                },
                DBusMethod(Manager1.Method.getHeard.rawValue, inputs: [.init("since", .uint64)], outputs: [.init("heard", .string)]) { call in
                    try await perform(call) { () throws(ManagerError) in
                        [.string(try await manager.heard(since: call.arguments[0].uint64 ?? 0))]
                    }
                },
                DBusMethod(
                    Manager1.Method.getConfiguration.rawValue,
                    outputs: [.init("file", .string), .init("values", .array(.structure([.string, .string]))), .init("restartPending", .array(.string))]
                ) { _ in
                    let running = await manager.runningConfiguration()
                    return [
                        .string(running.file),
                        .array(element: .structure([.string, .string]), running.values.map { .structure([.string($0.key), .string($0.value)]) }),
                        .array(element: .string, running.restartPending.map { .string($0) }),
                    ]
                },
                DBusMethod(
                    Manager1.Method.addTestResult.rawValue, inputs: [.init("result", .dictionary(key: .string, value: .variant))],
                    outputs: [.init("id", .string)]
                ) { call in
                    try await perform(call, audited: "test result added") { () throws(ManagerError) in
                        let fields = call.arguments[0].stringKeyed ?? [:]
                        let accepted: [Field] = [.testDate, .type, .symptomOnset]
                        for key in fields.keys where !accepted.map(\.rawValue).contains(key) {
                            throw .badParameter(field: key, problem: "not a test result key (TestDate, Type, SymptomOnset)")
                        }
                        // A time field: the caller's uint64, checked, since milliseconds of it need not fit Int64.
                        func time(_ name: Field) throws(ManagerError) -> UnixTime? {
                            let field = name.rawValue
                            guard let value = fields[field] else { return nil }
                            guard let seconds = value.variant?.uint64 else { throw .badParameter(field: field, problem: "uint64 unix seconds") }
                            guard let time = UnixTime(exactlySeconds: seconds) else {
                                throw .badParameter(field: field, problem: "\(seconds) is not a time (unix seconds)")
                            }
                            return time
                        }
                        guard let date = try time(.testDate) else {
                            throw .badParameter(field: Field.testDate.rawValue, problem: "required, uint64 unix seconds")
                        }
                        guard let type = fields[Field.type.rawValue]?.variant?.string, let kind = TestResult.Kind(rawValue: type) else {
                            throw .badParameter(field: Field.type.rawValue, problem: "required: confirmed, likely, negative or self-reported")
                        }
                        let onset = try time(.symptomOnset)
                        return [.string(try await manager.addTestResult(testDate: date, kind: kind, symptomOnset: onset))]
                    }
                },
                DBusMethod(Manager1.Method.getTestResults.rawValue, outputs: [.init("results", .array(.dictionary(key: .string, value: .variant)))]) {
                    call in
                    try await perform(call) { () throws(ManagerError) in
                        [.array(element: .dictionary(key: .string, value: .variant), await manager.testResults().map(Self.testResult))]
                    }
                },
                DBusMethod(Manager1.Method.shareDiagnosisKeys.rawValue, inputs: [.init("testResultId", .string), .init("code", .string)]) { call in
                    try await perform(call, audited: "keys shared") { () throws(ManagerError) in
                        try await authorizer.check(call.sender, .releaseKeys)
                        try await manager.share(testResultID: call.arguments[0].string ?? "", code: call.arguments[1].string ?? "")
                        return []
                    }
                },
                DBusMethod(Manager1.Method.resetAllData.rawValue) { call in
                    try await perform(call, audited: "reset") { () throws(ManagerError) in
                        try await authorizer.check(call.sender, .reset)
                        try await manager.resetAll()
                        return []
                    }
                },
            ],
            properties: Manager1.Property.allCases.map { property in
                DBusProperty(property.rawValue, Self.type(of: property), readableBy: property.isPrivate ? privateReader : nil) {
                    Self.value(properties().value(of: property), of: property)
                }
            },
            signals: [
                DBusSignal(Manager1.Signal.exposureDetected.rawValue, [.init("detectionTime", .uint64), .init("daysWithExposure", .uint32)]),
                DBusSignal(Manager1.Signal.detectionProgress.rawValue, [.init("keysDone", .uint32), .init("keysTotal", .uint32)]),
                DBusSignal(Manager1.Signal.detectionFinished.rawValue, [.init("success", .boolean), .init("error", .string)]),
                DBusSignal(Manager1.Signal.diagnosisKeysAvailable.rawValue, [.init("keys", Self.keysType)]),
            ])
    }

    /// A property's D-Bus type, from its signature in the contract.
    static func type(of property: Manager1.Property) -> DBusType {
        // The contract's signatures are constants; one that does not parse is a bug caught by every test.
        guard let type = try? DBusType(signature: property.signature) else { preconditionFailure("\(property): bad signature \(property.signature)") }
        return type
    }

    static func value(_ value: Manager.PropertyValue?, of property: Manager1.Property) -> DBusValue {
        Self.value(value, type: type(of: property))
    }

    static func value(_ value: Manager.PropertyValue?, type: DBusType) -> DBusValue {
        switch value {
        case .string(let text)?: .string(text)
        case .boolean(let flag)?: .boolean(flag)
        case .time(let time)?: .uint64(UInt64(max(0, time?.seconds ?? 0)))
        case .count(let count)?: .uint32(UInt32(clamping: count))
        case .signed(let number)?: .int64(number)
        case .strings(let list)?: .array(element: .string, list.map { .string($0) })
        case nil:
            switch type {
            case .string: .string("")
            case .boolean: .boolean(false)
            case .uint32: .uint32(0)
            case .int64: .int64(0)
            case .array(let element): .array(element: element, [])
            default: .uint64(0)
            }
        }
    }

    typealias Field = Manager1.TestResultField

    static func testResult(_ result: TestResult) -> DBusValue {
        var fields: [String: DBusValue] = [
            Field.id.rawValue: .string(result.id), Field.testDate.rawValue: .uint64(UInt64(max(0, result.testDate.seconds))),
            Field.type.rawValue: .string(result.kind.rawValue), Field.added.rawValue: .uint64(UInt64(max(0, result.added.seconds))),
            Field.shared.rawValue: .boolean(result.shared),
        ]
        if let onset = result.symptomOnset { fields[Field.symptomOnset.rawValue] = .uint64(UInt64(max(0, onset.seconds))) }
        return .properties(fields)
    }
}

/// Detection progress and outcomes as Manager1 signals. The worker exists before the bus
/// connection, so the connection is set later (and may be absent).
package final class DetectionSignals: DetectionObserver {
    private let bus = Mutex<DBusConnection?>(nil)
    private let lastProgress = Mutex<ContinuousClock.Instant?>(nil)

    package init() {}

    package func attach(_ connection: DBusConnection?) { bus.withLock { $0 = connection } }

    package func detectionProgress(keysDone: Int, keysTotal: Int) {
        // At most 20 a second: matching reports per chunk, from every task.
        let now = ContinuousClock.now
        let due = lastProgress.withLock { last -> Bool in
            if let last, now - last < .milliseconds(50), keysDone < keysTotal { return false }
            last = now
            return true
        }
        guard due, let bus = bus.withLock({ $0 }) else { return }
        try? bus.emit(
            path: Manager1.objectPath, interface: Manager1.interface, member: Manager1.Signal.detectionProgress.rawValue,
            [.uint32(UInt32(clamping: keysDone)), .uint32(UInt32(clamping: keysTotal))])
    }

    package func detectionFinished(_ outcome: DetectionOutcome) async {
        guard let bus = bus.withLock({ $0 }) else { return }
        try? bus.emit(
            path: Manager1.objectPath, interface: Manager1.interface, member: Manager1.Signal.detectionFinished.rawValue,
            [.boolean(outcome.problem == nil), .string(outcome.problem ?? "")])
        if outcome.exposed, outcome.result != nil {
            try? bus.emit(
                path: Manager1.objectPath, interface: Manager1.interface, member: Manager1.Signal.exposureDetected.rawValue,
                [.uint64(UInt64(max(0, outcome.finished.seconds))), .uint32(UInt32(clamping: outcome.answer.days.count))])
        }
    }
}
