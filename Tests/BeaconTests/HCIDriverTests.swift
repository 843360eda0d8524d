// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import HCIBeacon
import ENCore
import GaendTestSupport
import HCI
import InMemoryLogging
import KeySchedule
import Logging
import Beacon
import ServiceLifecycleTestKit
import Storage
import Synchronization
import SystemCalls
import Testing
import GaendConfiguration

/// The beacon's driver on HCI in process: the real driver, back end and beacon session over a
/// socketpair to a scripted controller, with the monotonic clock in the test's hands. What the process tests
/// cannot show without waiting real seconds: the backoff of faults and reconnections, the owner's
/// switch, and shutdown in the middle of a scan window. No test sleeps.
///
/// The time limit only catches a hang: alone, the suite takes a tenth of a second; under
/// AddressSanitizer beside every other suite on 2 cores, one of its tests took 74 s.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct HCIDriverTests {
    struct Rig {
        let controllers: ScriptedControllers
        let service: BeaconDriver<HCIBackend>
        let gate: EnablementGate
        let status: RadioStatusBoard
        let onAir: OnAirBoard
        let monotonic: TestClock
        let wall: ManualClock
        let log: ContactLogWriter
        let directory: TemporaryDirectory

        /// The service in a task of its own, as the service group runs it.
        func start() -> Task<Void, any Error> {
            let service = service
            return taskOnOwnThreads { try await service.run() }
        }

        /// Moves both clocks on together, as real time passes.
        func pass(_ seconds: Int64) {
            wall.advance(seconds: seconds)
            monotonic.advance(by: .seconds(seconds))
        }
    }

    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    func rig(
        enabled: Bool = true, refusing refusals: Int = 0, logger: Logger? = nil,
        script: @escaping @Sendable (HCICommand) -> [[UInt8]] = ScriptedController.standard
    ) throws -> Rig {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let wall = ManualClock(UnixTime.vectorDay.adding(seconds: 10 * 3600))
        var settings = RadioSettings()
        settings.scanWindowSeconds = 4
        settings.scanInterval = 10...10
        let keys = try KeySchedule(dataDirectory: data, clock: wall, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let controllers = ScriptedControllers(refusing: refusals, script: script)
        let gate = EnablementGate(enabled: enabled)
        let status = RadioStatusBoard(logger: quiet)
        let monotonic = TestClock()
        let onAir = OnAirBoard()
        let beacon = BeaconContext(
            settings: settings, keys: keys, log: log, clock: wall, gate: gate, status: status, onAir: onAir, logger: logger ?? quiet,
            monotonic: monotonic)
        // Commands time out on a clock of their own that the test never advances: how fast this
        // machine schedules the scripted controller must not decide the test.
        let backend = HCIBackend(description: "scripted", commandClock: TestClock(), monotonic: monotonic, logger: logger ?? quiet) {
            () throws(HCITransportError) in try controllers.connect()
        }
        let service = BeaconDriver(backend: backend, context: beacon)
        return Rig(
            controllers: controllers, service: service, gate: gate, status: status, onAir: onAir, monotonic: monotonic, wall: wall, log: log,
            directory: directory)
    }

    /// A controller whose Reset fails (Hardware Failure) every time: each re-initialization waits
    /// twice as long as the one before, on the service's clock, up to 30 s.
    @Test func faultsAreRetriedAfterOneTwoFourSeconds() async throws {
        let rig = try rig { command in
            command.opcode == .reset ? [ScriptedController.complete(.reset, status: 0x03)] : ScriptedController.standard(command)
        }
        let running = rig.start()
        defer { running.cancel() }
        for (resets, wait) in [(1, 1), (2, 2), (3, 4), (4, 8)] {
            await until { rig.controllers.resets == resets && rig.monotonic.waiting == 1 }
            // Not a moment early: one millisecond short of the wait, the controller hears nothing.
            rig.monotonic.advance(by: .seconds(wait) - .milliseconds(1))
            #expect(rig.monotonic.waiting == 1)
            #expect(rig.controllers.resets == resets)
            rig.monotonic.advance(by: .milliseconds(1))
        }
        await until { rig.controllers.resets == 5 }
        // All on the one connection: a refused command is a fault, not a lost controller.
        #expect(rig.controllers.count == 1)
        #expect(rig.status.status == .starting)
    }

    /// A controller that cannot be reached is retried after 1, 2 and 4 s, warned about once, and
    /// its return told with the count, rather than a warning every retry for as long as it lasts.
    @Test func anUnreachableControllerIsWarnedAboutOnce() async throws {
        var handler = InMemoryLogHandler()
        handler.logLevel = .debug
        let logs = handler
        let rig = try rig(refusing: 3, logger: Logger(label: "t", factory: { _ in logs }))
        let running = rig.start()
        defer { running.cancel() }
        var elapsed = 0
        for wait in [1, 2, 4] {
            await until { rig.monotonic.deadlines == [.seconds(elapsed + wait)] }
            #expect(rig.status.status == .bluetoothOff)
            rig.monotonic.advance(by: .seconds(wait))
            elapsed += wait
        }
        await until { rig.controllers.advertising == [true] }
        let told = logs.entries.filter { $0.level >= .notice }.map { "\($0.level) \($0.message)" }
        #expect(told.filter { $0.contains("unreachable") } == ["warning controller unreachable; retrying until it answers"])
        #expect(logs.entries.contains { $0.message.description == "controller reachable again" && $0.metadata["failedAttempts"] == "3" })
        #expect(logs.entries.filter { $0.level == .debug && $0.message.description.contains("unreachable") }.count == 2)
    }

    /// The owner's switch: off ends the scan window into the log, stops advertising and lets the
    /// controller go; on connects again and advertises.
    @Test func disablingLetsTheControllerGoAndEnablingTakesItBack() async throws {
        let rig = try rig()
        let running = rig.start()
        defer { running.cancel() }
        await until { rig.controllers.scanning == [true] && rig.monotonic.waiting == 1 }
        #expect(rig.controllers.advertising == [true])
        #expect(rig.status.status == .active)
        // What status shows of the beacon: since when, the address set on the controller, the
        // RPI's interval, the next rotation 10 to 20 minutes on (RadioSettings' default).
        let started = rig.wall.now()
        let onAir = try #require(rig.onAir.value)
        #expect(onAir.since == started)
        #expect(onAir.interval == ENIntervalNumber(containing: started))
        let address = try #require(onAir.address)
        #expect(
            rig.controllers.commands.contains {
                ($0.opcode == .leSetRandomAddress || $0.opcode == .leSetAdvertisingSetRandomAddress)
                    && Array($0.parameters.suffix(6)) == address.littleEndianBytes
            })
        let rotation = try #require(onAir.nextRotation)
        #expect((600...1200).contains(rotation.seconds - started.seconds))

        rig.pass(2)
        rig.gate.set(false)
        await until { rig.controllers.advertising == [true, false] }
        #expect(rig.onAir.value == nil)
        await until { await rig.log.activity().lastWindowEnd == rig.wall.now() }
        #expect(rig.controllers.scanning == [true, false])
        #expect(rig.controllers.count == 1)

        rig.gate.set(true)
        await until { rig.controllers.count == 2 && rig.controllers.advertising == [true, false, true] }
    }

    /// A service that starts disabled does not touch the controller until enabled.
    @Test func aDisabledStartLeavesTheControllerAlone() async throws {
        let rig = try rig(enabled: false)
        let running = rig.start()
        defer { running.cancel() }
        for _ in 0..<100 { await Task.yield() }
        #expect(rig.controllers.count == 0)
        rig.gate.set(true)
        await until { rig.controllers.advertising == [true] }
    }

    /// The controller hangs up: the service connects again after 1 s, not before.
    @Test func aLostControllerIsReconnectedAfterOneSecond() async throws {
        let rig = try rig()
        let running = rig.start()
        defer { running.cancel() }
        await until { rig.controllers.scanning == [true] && rig.monotonic.waiting == 1 }
        #expect(rig.monotonic.deadlines == [.seconds(4)])
        let firstStart = rig.wall.now()
        #expect(rig.onAir.value?.since == firstStart)
        rig.controllers.last?.hangUp()
        // The scan window's sleep ends with the connection; the one sleep now is the backoff.
        await until { rig.monotonic.deadlines == [.seconds(1)] }
        rig.wall.advance(seconds: 60)
        rig.monotonic.advance(by: .milliseconds(999))
        #expect(rig.controllers.count == 1)
        rig.monotonic.advance(by: .milliseconds(1))
        await until { rig.controllers.count == 2 && rig.controllers.advertising.last == true }
        // Advertising began again: status says since the reconnection, not since the first start.
        await until { rig.onAir.value?.since == firstStart.adding(seconds: 60) }
    }

    /// Graceful shutdown in the middle of a scan window: the window is appended up to that moment,
    /// scanning and advertising are stopped, and the service returns.
    @Test func shutdownMidWindowWritesTheWindowAndStops() async throws {
        let rig = try rig()
        try await testGracefulShutdown { trigger in
            let running = rig.start()
            await until { rig.controllers.scanning == [true] && rig.monotonic.waiting == 1 }
            rig.pass(3)
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        #expect(await rig.log.activity().lastWindowEnd == rig.wall.now())
        #expect(rig.controllers.scanning == [true, false])
        #expect(rig.controllers.advertising == [true, false])
    }

    /// The scan windows in the rig's log.
    func windows(_ rig: Rig) throws -> [ScanWindowRecord] {
        var found: [ScanWindowRecord] = []
        try ContactLogReader(dataDirectory: DataDirectory(path: rig.directory.path)).forEachRecord(in: nil) { record in
            if case .scanWindow(let window) = record { found.append(window) }
        }
        return found
    }

    static func isScanDisable(_ command: HCICommand) -> Bool {
        (command.opcode == .leSetScanEnable || command.opcode == .leSetExtendedScanEnable) && command.parameters.first == 0
    }

    /// The window's edge: every report the controller sent before it completed the scan's disable
    /// is in the window that disable closed. Before issue 37 they waited in the controller's queue
    /// while the window was written, and reached a scanner with no window open.
    @Test func reportsSentJustBeforeTheDisableCompletesAreInItsWindow() async throws {
        let late: UInt32 = 300
        let rig = try rig { command in
            guard Self.isScanDisable(command) else { return ScriptedController.standard(command) }
            return (0..<late).map { ScriptedController.gaenReport($0) } + [ScriptedController.complete(command.opcode)]
        }
        let running = rig.start()
        defer { running.cancel() }
        await until { rig.controllers.scanning == [true] && rig.monotonic.waiting == 1 }
        rig.pass(4)
        await until { await rig.log.activity().lastWindowEnd != nil }
        let window = try #require(try windows(rig).first)
        #expect(window.exposureNotificationReports == late)
        #expect(window.aggregates == late)
        #expect(rig.service.reports.outsideWindows == 0)
    }

    /// Reports after the disable's completion (a controller that keeps reporting) find no window
    /// open: each is counted, none filed.
    @Test func reportsAfterTheDisableAreCountedNotFiled() async throws {
        let stray: UInt32 = 50
        let rig = try rig { command in
            guard Self.isScanDisable(command) else { return ScriptedController.standard(command) }
            return [ScriptedController.complete(command.opcode)] + (0..<stray).map { ScriptedController.gaenReport($0) }
        }
        let running = rig.start()
        defer { running.cancel() }
        await until { rig.controllers.scanning == [true] && rig.monotonic.waiting == 1 }
        rig.pass(4)
        await until { rig.service.reports.outsideWindows == Int(stray) }
        await until { (try? windows(rig).count) == 1 }
        #expect(try windows(rig).first?.exposureNotificationReports == 0)
    }
}
