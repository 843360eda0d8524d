// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ClockTrust
import ContactLog
import DBus
import Daemon
import ENCore
import GaendAPI
import GaendTestSupport
import KeySchedule
import Logging
import GaendConfiguration
import Storage
import Testing

/// Manager1 on a clock that cannot be trusted: nothing released, pre-authorized or recorded, each
/// refusal `ClockUntrusted` naming why; the properties say so.
@Suite(.ownThreads) struct ManagerClockTests {
    @Test func keysTestResultsAndTheStatusWaitForATrustedClock() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path)
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let readings = ManualClockReadings(wall: UnixTime.vectorDay.adding(seconds: 12 * 3600), synchronized: true)
        let board = ClockTrustBoard(policy: .system, readings: readings)
        let keys = try KeySchedule(dataDirectory: data, clock: board, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: board, logger: quiet)
        let status = RadioStatusBoard(logger: quiet)
        status.set(.starting)
        var settings = Manager.Settings()
        settings.radio = .bluez(index: 0)
        let manager = try Manager(
            dataDirectory: data, keys: keys, log: log, worker: nil, radioStatus: status, gate: EnablementGate(enabled: false),
            settings: settings, clock: board, clockTrust: board, logger: quiet)
        try await manager.setEnabled(true)
        _ = try await keys.currentKey()
        readings.advance(milliseconds: 1_200_000)
        #expect(try await manager.diagnosisKeys().count == 1)

        // The key server's Date says we are 3 h 12 min behind.
        board.witnessed(server: readings.wall().adding(seconds: 3 * 3600 + 12 * 60))
        let reason = "the clock is 3 h 12 min behind the key server"
        await #expect(throws: ManagerError.clockUntrusted(reason)) { try await manager.diagnosisKeys() }
        await #expect(throws: ManagerError.clockUntrusted(reason)) { try await manager.preAuthorize() }
        await #expect(throws: ManagerError.clockUntrusted(reason)) {
            try await manager.addTestResult(testDate: readings.wall(), kind: .confirmed, symptomOnset: nil)
        }
        #expect(await manager.testResults().isEmpty)
        #expect(ManagerError.clockUntrusted(reason).dbusError.name.rawValue == "org.gaend.Error.ClockUntrusted")

        let properties = await manager.properties()
        #expect(properties[.clockTrusted] == .boolean(false))
        #expect(properties[.clockOffset] == .signed((3 * 3600 + 12 * 60) * 1000))
        #expect(properties[.status] == .string(Manager1.Status.scanning.rawValue))
        #expect(properties[.statusReason] == .string("scanning only, nothing is broadcast: " + reason))

        // A later answer agrees: trusted again.
        board.witnessed(server: readings.wall())
        #expect(await manager.properties()[.clockTrusted] == .boolean(true))
        _ = try await manager.addTestResult(testDate: readings.wall(), kind: .confirmed, symptomOnset: nil)
    }
}
