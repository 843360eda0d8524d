// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ClockTrust
import ContactLog
import ENCore
import GaendConfiguration
import GaendTestSupport
import HCI
import HCIBeacon
import KeySchedule
import Logging
import Storage
import Testing

/// The beacon on a clock that cannot be trusted, in process, with every clock in the test's hands:
/// nothing broadcast, sightings held on the boot clock and re-timed exactly once the clock is
/// trusted; a step of a trusted clock moves the advertiser to the new interval at once.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct ClockTrustBeaconTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The true time of the test: 2020-04-01 10:00 UTC.
    static let truth = UnixTime.vectorDay.adding(seconds: 10 * 3600)

    struct Parts {
        let readings: ManualClockReadings
        let board: ClockTrustBoard
        let keys: KeySchedule
        let log: ContactLogWriter
        let held: HeldSightings
        let settings: RadioSettings
        let monotonic: TestClock
        let directory: TemporaryDirectory
        let data: DataDirectory

        /// Where windows heard on the untrusted clock go: the held sightings, on the test's boot clock.
        var untrusted: UntrustedWindows {
            let readings = readings
            return UntrustedWindows(held: held, bootMilliseconds: { readings.boot() })
        }

        /// Real time passes: the wall clock, the boot clock and the monotonic clock together.
        func pass(seconds: Int64) {
            readings.advance(milliseconds: seconds * 1000)
            monotonic.advance(by: .seconds(seconds))
        }
    }

    func parts(wall: UnixTime, policy: ClockPolicy, synchronized: Bool) throws -> Parts {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let readings = ManualClockReadings(wall: wall, synchronized: synchronized)
        let board = ClockTrustBoard(policy: policy, readings: readings)
        var settings = RadioSettings()
        settings.scanWindowSeconds = 4
        settings.scanInterval = 10...10
        settings.rotationInterval = 600...600
        return Parts(
            readings: readings, board: board, keys: try KeySchedule(dataDirectory: data, clock: board, logger: quiet),
            log: try ContactLogWriter(dataDirectory: data, clock: board, logger: quiet),
            held: try HeldSightings(dataDirectory: data, bootID: readings.bootID, logger: quiet), settings: settings, monotonic: TestClock(),
            directory: directory, data: data)
    }

    /// A beacon session on `radio` with these parts, running in a task of its own, once it scans.
    func running(_ parts: Parts, on radio: FakeRadio) async throws -> (BeaconSession, Task<Void, any Error>) {
        let session = try BeaconSession(
            radio: radio, keys: parts.keys, log: parts.log, clock: parts.board, monotonic: parts.monotonic, settings: parts.settings,
            untrusted: parts.untrusted, logger: quiet)
        let running = taskOnOwnThreads { try await session.run() }
        await until { radio.scanning && parts.monotonic.waiting == 1 }
        return (session, running)
    }

    /// One report of `rpi` to the session's scanner; its payload.
    func hear(_ rpi: UInt64, _ session: BeaconSession) async -> ExposureNotificationPayload {
        let payload = ExposureNotificationPayload(rpi: RollingProximityIdentifier(Bytes16(words: (rpi, rpi))), aem: AssociatedEncryptedMetadata((1, 2, 3, 4)))
        await session.scanner.handle(.sighting(Sighting(payload: payload, rssi: -60, address: BluetoothAddress(littleEndian: [1, 2, 3, 4, 5, 0xC6]))))
        return payload
    }

    @Test func sightingsHeardUntrustedAreReTimedExactlyOnceTheClockIsTrusted() async throws {
        // Booted offline with the clock a day behind and no time daemon yet.
        let parts = try parts(wall: Self.truth.adding(seconds: -86_400), policy: .synchronized, synchronized: false)
        let radio = FakeRadio()
        let (session, running) = try await running(parts, on: radio)
        defer { running.cancel() }
        parts.pass(seconds: 1)
        let payload = await hear(7, session)
        parts.pass(seconds: 3)
        await until { await parts.held.count == (1, 1) }
        #expect(radio.advertised.isEmpty, "nothing is broadcast on an untrusted clock")
        #expect(await parts.keys.history().isEmpty, "no key is made")
        #expect(try ContactLogReader(dataDirectory: parts.data).days().isEmpty)

        // A time daemon synchronizes: the clock steps the day forward and the kernel says so.
        parts.pass(seconds: 100)
        parts.readings.step(milliseconds: 86_400_000)
        parts.readings.synchronize(true)
        let clockService = ClockService(board: parts.board, held: parts.held, log: parts.log, monotonic: TestClock(), watchSteps: false, logger: quiet)
        let service = taskOnOwnThreads { try await clockService.run() }
        defer { service.cancel() }
        #expect(parts.board.stepped().trusted)
        await until { await parts.held.count == (0, 0) && (try? LogFixtureReader(data: parts.data).aggregates().isEmpty) == false }
        let records = try LogFixtureReader(data: parts.data).aggregates()
        // Heard 1 s after the test's start, by the true clock.
        #expect(records.map(\.firstSeen) == [Self.truth.adding(seconds: 1)])
        #expect(records.first?.rpi == payload.rpi)
    }

    @Test func aWindowOpenWhenTrustIsGainedIsFiledWhenItEnds() async throws {
        let parts = try parts(wall: Self.truth.adding(seconds: -7200 - 60), policy: .system, synchronized: false)
        // The key server's Date says 2 h 1 min behind: untrusted.
        parts.board.witnessed(server: Self.truth)
        let (session, running) = try await running(parts, on: FakeRadio())
        defer { running.cancel() }
        parts.pass(seconds: 1)
        _ = await hear(9, session)
        // Mid-window the clock is set right and a later answer agrees; no clock service runs.
        parts.readings.step(milliseconds: 7_260_000)
        parts.board.witnessed(server: parts.readings.wall())
        #expect(parts.board.verdict.trusted)
        parts.pass(seconds: 3)
        await until { await parts.held.count == (0, 0) && (try? LogFixtureReader(data: parts.data).aggregates().count) == 1 }
        #expect(try LogFixtureReader(data: parts.data).aggregates().map(\.firstSeen) == [Self.truth.adding(seconds: 1)])
    }

    @Test func aStepForwardAndBackMovesTheAdvertiserAtOnceAndTrustGainedStartsIt() async throws {
        let parts = try parts(wall: Self.truth, policy: .synchronized, synchronized: false)
        let gate = EnablementGate(enabled: true)
        let status = RadioStatusBoard(logger: quiet)
        let onAir = OnAirBoard()
        let beacon = BeaconContext(
            settings: parts.settings, keys: parts.keys, log: parts.log, clock: parts.board, gate: gate, status: status, onAir: onAir,
            untrusted: parts.untrusted, clockShifts: parts.board.shifts, logger: quiet,
            monotonic: parts.monotonic)
        let controllers = ScriptedControllers(script: ScriptedController.standard)
        let backend = HCIBackend(description: "scripted", commandClock: TestClock(), monotonic: parts.monotonic, logger: quiet) {
            () throws(HCITransportError) in try controllers.connect()
        }
        let service = BeaconDriver(backend: backend, context: beacon)
        let running = taskOnOwnThreads { try await service.run() }
        defer { running.cancel() }
        // Untrusted: scanning, not advertising.
        await until { controllers.scanning == [true] && parts.monotonic.waiting == 1 }
        #expect(controllers.advertising.isEmpty)
        #expect(onAir.value == nil)

        // Trust gained: the session starts over and advertises the interval of now.
        parts.readings.synchronize(true)
        parts.board.reevaluate()
        await until { controllers.advertising == [true] && onAir.value != nil }
        #expect(onAir.value?.interval == ENIntervalNumber(containing: Self.truth))

        // A step of an hour forward: a new address on the new interval, without waiting for the rotation.
        let firstAddress = onAir.value?.address
        parts.readings.step(milliseconds: 3_600_000)
        parts.board.stepped()
        await until { onAir.value?.interval == ENIntervalNumber(containing: Self.truth.adding(seconds: 3600)) }
        #expect(onAir.value?.address != firstAddress)
        // And back.
        parts.readings.step(milliseconds: -3_600_000)
        parts.board.stepped()
        await until { onAir.value?.interval == ENIntervalNumber(containing: Self.truth) }
        // One key, for the one day the clock was ever on.
        #expect(await parts.keys.history().count == 1)

        // Trust lost: the controller is reset (advertising off) and only scans; nothing is enabled again.
        let (enables, resets) = (controllers.advertising.count, controllers.resets)
        parts.readings.synchronize(false)
        parts.board.reevaluate()
        await until { onAir.value == nil && controllers.resets > resets && controllers.scanning.last == true && parts.monotonic.waiting == 1 }
        #expect(controllers.advertising.count == enables)
    }
}

/// The contact log's aggregates, read back.
struct LogFixtureReader {
    let data: DataDirectory

    func aggregates() throws -> [ContactAggregate] {
        var found: [ContactAggregate] = []
        try ContactLogReader(dataDirectory: data).forEachRecord(in: nil) { record in
            if case .aggregate(let aggregate) = record { found.append(aggregate) }
        }
        return found
    }
}
