// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import GaendTestSupport
import KeySchedule
import Logging
import Beacon
import Storage
import Testing
import GaendConfiguration

/// The beacon session in process (as both radio services run it), on a fake back end, with the
/// wall clock and the monotonic clock both in the test's hands: scan windows into the real contact log, rotation at its
/// interval and at UTC midnight, and cancellation mid-window. Each test runs in well under a
/// second of wall time and never sleeps; the time limit only catches a hang (see HCIDriverTests).
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct BeaconSessionTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    struct Beacon {
        let radio: FakeRadio
        let wall: ManualClock
        let monotonic: TestClock
        let session: BeaconSession
        let log: ContactLogWriter
        let directory: TemporaryDirectory
        let settings: RadioSettings
        let keys: KeySchedule
    }

    func beacon(at time: UnixTime, rotation: ClosedRange<Int> = 600...600) async throws -> Beacon {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let wall = ManualClock(time)
        var settings = RadioSettings()
        settings.rotationInterval = rotation
        settings.scanWindowSeconds = 4
        settings.scanInterval = 10...10
        let radio = FakeRadio()
        let keys = try KeySchedule(dataDirectory: data, clock: wall, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let monotonic = TestClock()
        let session = try BeaconSession(radio: radio, keys: keys, log: log, clock: wall, monotonic: monotonic, settings: settings, logger: quiet)
        return Beacon(
            radio: radio, wall: wall, monotonic: monotonic, session: session, log: log, directory: directory, settings: settings, keys: keys)
    }

    /// The session in a task of its own, as the radio services run it; returns once it is on the air.
    func start(_ beacon: Beacon) async -> Task<Void, any Error> {
        let session = beacon.session
        let running = taskOnOwnThreads { try await session.run() }
        await until { beacon.radio.advertised.count == 1 }
        return running
    }

    /// Advances both clocks together, as real time passes.
    func pass(_ seconds: Int64, _ beacon: Beacon) {
        beacon.wall.advance(seconds: seconds)
        beacon.monotonic.advance(by: .seconds(seconds))
    }

    @Test func windowsGoToTheLogAndTheAddressAndRPIRotateTogetherAtTheInterval() async throws {
        let beacon = try await beacon(at: UnixTime.vectorDay.adding(seconds: 10 * 3600))
        let running = await start(beacon)
        let first = try #require(beacon.radio.advertised.first)
        defer { running.cancel() }

        // A window opens, lasts its 4 s, and is appended; then the 10 s pause.
        await until { beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        pass(4, beacon)
        await until { !beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        #expect(await beacon.log.activity().lastWindowEnd == beacon.wall.now())
        #expect(beacon.radio.advertised.count == 1)

        // The rotation falls due 600 s after the start: it happens between windows, with a new
        // address and a new frame (RPI) in the same call.
        pass(600, beacon)
        await until { beacon.radio.advertised.count == 2 }
        let second = beacon.radio.advertised[1]
        #expect(second.address != first.address)
        #expect(second.payload.rpi != first.payload.rpi)
        #expect(await beacon.session.advertiser.rotations == 2)
    }

    /// At 23:59:30 the next rotation is 30 s away, not 600: the new day's key goes on the air at
    /// midnight, kept to the second even when a scan window is open.
    @Test func theKeyChangesAtUTCMidnight() async throws {
        let beacon = try await beacon(at: UnixTime.vectorDay.adding(seconds: 86_400 - 30))
        let running = await start(beacon)
        let before = try #require(await beacon.session.advertiser.current?.key)
        defer { running.cancel() }
        await until { beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        pass(4, beacon)
        await until { !beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        // 26 s on it is midnight: the rotation falls due then, not 600 s after the start.
        pass(26, beacon)
        await until { beacon.radio.advertised.count == 2 }
        let after = try #require(await beacon.session.advertiser.current?.key)
        #expect(after.rollingStartIntervalNumber == before.rollingStartIntervalNumber.advanced(by: 144))
        #expect(after.keyData != before.keyData)
    }

    /// Issue 53: the current key released (a share) puts a new address and the new key's RPI on
    /// the air at once, without waiting for the rotation timer (the released RPI stayed 14 more
    /// minutes, telling whoever held the published key which device had just reported); in a
    /// window, it ends the window first, as the controller refuses a new address while scanning.
    @Test func aReleasedKeyLeavesTheAirAtOnce() async throws {
        let beacon = try await beacon(at: UnixTime.vectorDay.adding(seconds: 10 * 3600))
        let running = await start(beacon)
        defer { running.cancel() }
        let first = try #require(beacon.radio.advertised.first)
        let firstKey = try #require(await beacon.session.advertiser.current?.key)
        await until { beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        pass(4, beacon)
        await until { !beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        // In the 10 s pause, 5 s on: released, and rotated with no time passing.
        pass(5, beacon)
        let released = try await beacon.keys.releaseDiagnosisKeys()
        #expect(released.last?.keyData == firstKey.keyData)
        await until { beacon.radio.advertised.count == 2 }
        let second = beacon.radio.advertised[1]
        #expect(second.address != first.address && second.payload.rpi != first.payload.rpi)
        let secondKey = try #require(await beacon.session.advertiser.current?.key)
        #expect(secondKey.keyData != firstKey.keyData)

        // In a window: a reset deletes the key; the window ends, then the rotation.
        await until { beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        try await beacon.keys.reset()
        await until { beacon.radio.advertised.count == 3 }
        #expect(await beacon.session.advertiser.current?.key.keyData != secondKey.keyData)
    }

    /// Cancelled mid-window (shutdown), the session ends at once with CancellationError; finishing
    /// it appends the open window, stops scanning and advertising.
    @Test func cancellationEndsTheTimelineMidWindow() async throws {
        let beacon = try await beacon(at: UnixTime.vectorDay.adding(seconds: 10 * 3600))
        let running = await start(beacon)
        await until { beacon.radio.scanning && beacon.monotonic.waiting == 1 }
        pass(2, beacon)
        running.cancel()
        await #expect(throws: CancellationError.self) { try await running.value }
        await beacon.session.finish()
        #expect(await beacon.log.activity().lastWindowEnd == beacon.wall.now())
        #expect(!beacon.radio.scanning)
        #expect(beacon.radio.stops == 1)
    }
}
