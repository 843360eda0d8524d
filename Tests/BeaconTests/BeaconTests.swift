// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import GaendTestSupport
import HCI
import KeySchedule
import Logging
import Beacon
import Storage
import Testing
import GaendConfiguration
import HCIBeacon

/// The advertiser on one Bumble controller and the scanner on another, with the real key schedule
/// and the real contact log.
@Suite(.ownThreads, .enabled(if: BumbleFixture.python != nil, "no Bumble venv: run `make test-peers` (make check does)"))
struct BeaconTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test(.timeLimit(.minutes(3)), arguments: [false, true])
    func whatOneBeaconSendsTheOtherLogsAndRotationChangesAddressAndRPITogether(extended: Bool) async throws {
        let fixture = try BumbleFixture(controllers: 2, arguments: ["--pair-rssi", "C0:C1=-67"])
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/gaend")
        let clock = ManualClock(.vectorDay.adding(seconds: 10 * 3600))
        let keys = try KeySchedule(dataDirectory: data, clock: clock, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: DataDirectory(path: directory.path + "/peer"), clock: clock, logger: quiet)

        let advertisingController = HCIController(
            transport: try FileDescriptorTransport.unix(path: fixture.sockets[0]), commandTimeout: .seconds(60), logger: quiet)
        let scanningController = HCIController(
            transport: try FileDescriptorTransport.unix(path: fixture.sockets[1]), commandTimeout: .seconds(60), logger: quiet)
        async let readingA: Void = advertisingController.run()
        async let readingB: Void = scanningController.run()
        let info = try await advertisingController.initialize()
        let scanningInfo = try await scanningController.initialize()

        var settings = RadioSettings()
        settings.calibrationConfidence = .low
        let advertisingRadio = HCIRadio(controller: advertisingController, info: info, extended: extended)
        let advertiser = try Advertiser(radio: advertisingRadio, keys: keys, clock: clock, settings: settings, logger: quiet)
        let scanner = Scanner(
            radio: HCIRadio(controller: scanningController, info: scanningInfo, extended: extended), log: log, clock: clock, settings: settings, logger: quiet)
        #expect(info.supportsExtendedAdvertising)
        try await advertiser.start()
        let first = try #require(await advertiser.current)

        var reports = scanningController.reports.makeAsyncIterator()
        var addressesOfRPI: [RollingProximityIdentifier: Set<BluetoothAddress>] = [:]
        /// Reads `count` reports into a scan window, or more (up to 2,000) until `until` holds: under
        /// load, reports of an old advertisement can queue ahead of the new one's.
        func listen(_ count: Int, until: () -> Bool = { true }) async throws {
            try await scanner.beginWindow()
            var read = 0
            while read < count || (!until() && read < 2000) {
                read += 1
                let report = try #require(await reports.next())
                if let payload = try ExposureNotificationPayload(parsing: report.data) {
                    addressesOfRPI[payload.rpi, default: []].insert(report.address)
                    // ADV_NONCONN_IND; in an extended report, the legacy non-connectable properties.
                    #expect(report.eventType == (extended ? 0x10 : 3))
                    #expect(report.extended == extended)
                    #expect(report.addressType == 1)
                    #expect(report.data.count == 31)
                }
                await scanner.handle(HCIRadio.report(report))
            }
            try await scanner.endWindow()
        }
        try await listen(3)

        // The RPI is the one `gaenctl tools derive` gives for the stored TEK and the interval.
        let crypto = try ExposureKeyCrypto()
        let key = try await keys.currentKey()
        let interval = try #require(ENIntervalNumber(containing: clock.now()))
        #expect(first.rpi == crypto.rpi(rpik: crypto.rpik(for: key.keyData), interval: interval))
        #expect(first.address.bytes[0] & 0xC0 == 0)  // non-resolvable private

        // Rotate in a later interval: a new address and a new RPI, together.
        clock.advance(seconds: 15 * 60)
        try await advertiser.rotate()
        let second = try #require(await advertiser.current)
        #expect(second.address != first.address)
        #expect(second.rpi != first.rpi)
        // A figure, not an assertion on speed: how long advertising was off.
        let gap = try #require(await advertisingRadio.lastAdvertisingGap)
        print("rotation gap on Bumble over a unix socket: \(gap)")
        try await listen(12) { addressesOfRPI[second.rpi] != nil }  // reports of the old advertisement still in flight are fine

        #expect(addressesOfRPI[first.rpi] == [first.address])
        #expect(addressesOfRPI[second.rpi] == [second.address])

        // The peer's log holds both RPIs, with the pair's RSSI and the AEM that decrypts to our metadata.
        var logged = [ContactAggregate]()
        try ContactLogReader(dataDirectory: DataDirectory(path: directory.path + "/peer")).forEachRecord { record in
            if case .aggregate(let aggregate) = record { logged.append(aggregate) }
        }
        #expect(Set(logged.map(\.rpi)) == [first.rpi, second.rpi])
        #expect(logged.allSatisfy { $0.rssi.maximum == -67 })
        // The second window knows when the first ended (secondsSinceLastScan needs it).
        #expect(logged.filter { $0.rpi == second.rpi }.allSatisfy { $0.previousScanEnd != nil })
        let aemk = crypto.aemk(for: key.keyData)
        let firstAggregate = try #require(logged.first { $0.rpi == first.rpi })
        let metadata = crypto.metadata(from: firstAggregate.aem, aemk: aemk, rpi: first.rpi)
        #expect(metadata.txPower == info.advertisingTxPower)
        #expect(metadata.calibrationConfidence == .low)
        #expect(await scanner.windowsWritten == 2)

        try await advertiser.stop()
        fixture.stop()
        await readingA
        await readingB
    }

    @Test func theNextRotationComesNoLaterThanMidnight() {
        let noon = UnixTime.vectorDay.adding(seconds: 12 * 3600)
        #expect(Advertiser.rotationDelay(drawn: 900, now: noon) == 900)
        #expect(Advertiser.rotationDelay(drawn: 900, now: UnixTime.vectorDay.adding(seconds: 86_400 - 120)) == 120)
        #expect(Advertiser.rotationDelay(drawn: 900, now: UnixTime.vectorDay.adding(seconds: 86_400)) == 900)
        #expect(Advertiser.rotationDelay(drawn: 0, now: noon) == 1)
    }
}
