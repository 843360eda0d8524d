// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import GaendTestSupport
import HCI
import Logging
import Testing

/// The transport and driver against Bumble's controllers (testbed/controllers.py), an independent
/// implementation of the controller side of HCI.
@Suite(.ownThreads, .enabled(if: BumbleFixture.python != nil, "no Bumble venv: run `make test-peers` (make check does)"))
struct BumbleControllerTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
    static let frame = "02011a03036ffd17166ffd" + "8be6cd371c5c891604bfbe49df845096" + "72033874"

    @Test(.timeLimit(.minutes(3)))
    func aNonConnectableGAENAdvertisementReachesTheOtherController() async throws {
        let fixture = try BumbleFixture(controllers: 2, arguments: ["--pair-rssi", "C0:C1=-71"])
        let advertiser = HCIController(transport: try FileDescriptorTransport.unix(path: fixture.sockets[0]), commandTimeout: .seconds(60), logger: quiet)
        let scanner = HCIController(transport: try FileDescriptorTransport.unix(path: fixture.sockets[1]), commandTimeout: .seconds(60), logger: quiet)
        async let readingA: Void = advertiser.run()
        async let readingB: Void = scanner.run()

        let info = try await advertiser.initialize()
        #expect(info.leFeatures != 0)
        _ = try await scanner.initialize()

        let address = BluetoothAddress.nonResolvablePrivate(random: [0xC1, 0x22, 0x33, 0x44, 0x55, 0x66])
        // Advertising with a random own address before one is set is refused, as real controllers do.
        try await advertiser.send(
            .leSetAdvertisingParameters(minimumInterval: 0x0140, maximumInterval: 0x01B0, type: .nonConnectableUndirected, ownAddressRandom: true))
        await #expect(throws: HCIControllerError.status(.invalidParameters, .leSetAdvertisingEnable)) {
            try await advertiser.send(.leSetAdvertisingEnable(true))
        }
        try await advertiser.send(.leSetRandomAddress(address))
        try await advertiser.send(.leSetAdvertisingData(Hex.decode(Self.frame)))
        try await advertiser.send(.leSetAdvertisingEnable(true))
        // The address cannot change under a running advertisement: rotation must stop it first.
        await #expect(throws: HCIControllerError.status(.commandDisallowed, .leSetRandomAddress)) {
            try await advertiser.send(.leSetRandomAddress(address))
        }

        try await scanner.send(.leSetScanParameters(active: false, interval: 0x60, window: 0x60))
        try await scanner.send(.leSetScanEnable(true, filterDuplicates: false))
        var reports = scanner.reports.makeAsyncIterator()
        let report = try #require(await reports.next())
        #expect(report.eventType == 3)  // ADV_NONCONN_IND
        #expect(!report.extended)
        #expect(report.addressType == 1)
        #expect(report.address == address)
        #expect(report.rssi == -71)
        let payload = try #require(try ExposureNotificationPayload(parsing: report.data))
        #expect(payload.rpi.description == "8be6cd371c5c891604bfbe49df845096")
        #expect(payload.aem.description == "72033874")
        // Duplicates are not filtered: the same advertisement keeps arriving.
        let again = try #require(await reports.next())
        #expect(again.address == address)

        // The controller process dies: both drivers see the transport close.
        fixture.stop()
        await readingA
        await readingB
        await #expect(throws: HCIControllerError.closed) { try await advertiser.send(.reset) }
    }
}
