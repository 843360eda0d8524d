// SPDX-License-Identifier: GPL-3.0-or-later

package import Beacon
package import ENCore
package import HCI

/// `BeaconRadio` on an initialized HCI controller: extended advertising (one legacy-PDU set) and
/// extended scanning when the controller offers them, the legacy commands otherwise. A controller
/// takes one family or the other, never both.
package actor HCIRadio: BeaconRadio {
    private let controller: HCIController
    private let extended: Bool
    private let info: ControllerInfo
    private var advertising = false
    static let advertisingSet: UInt8 = 0
    /// How long the last replacement had advertising off: from the disable's completion to the
    /// enable's (a figure; the goal is under 50 ms).
    package private(set) var lastAdvertisingGap: Duration?
    /// What the gap is measured on.
    private let clock: any Clock<Duration>
    /// Returns once the controller's first n reports have been handed to the scanner.
    private let drain: @Sendable (UInt64) async -> Void

    /// - Parameter extended: the command family; by default the extended one when the controller
    ///   offers it (tests choose legacy on such a controller too).
    package init(
        controller: HCIController, info: ControllerInfo, extended: Bool? = nil, clock: any Clock<Duration> = ContinuousClock(),
        drain: @escaping @Sendable (UInt64) async -> Void = { _ in }
    ) {
        self.clock = clock
        self.drain = drain
        self.controller = controller
        self.info = info
        self.extended = extended ?? info.supportsExtendedAdvertising
    }

    package var advertisingTxPower: Int8 { info.advertisingTxPower }

    @discardableResult
    package func advertise(_ payload: ExposureNotificationPayload, from address: BluetoothAddress, interval: ClosedRange<UInt16>) async throws
        -> BluetoothAddress?
    {
        // The frame is made here, at the HCI edge: Flags, the 0xFD6F UUID, the service data.
        let data = payload.advertisingData()
        var sinceDisabled: Stopwatch?
        if advertising {
            try await stopAdvertising()
            sinceDisabled = Stopwatch(clock)
        }
        // The random address cannot change while advertising (Core Vol 4 Part E 7.8.4), hence the
        // disable first, and the order below.
        if extended {
            try await controller.send(
                .leSetExtendedAdvertisingParameters(handle: Self.advertisingSet, minimumInterval: interval.lowerBound, maximumInterval: interval.upperBound))
            try await controller.send(.leSetAdvertisingSetRandomAddress(handle: Self.advertisingSet, address))
            try await controller.send(.leSetExtendedAdvertisingData(handle: Self.advertisingSet, data))
            try await controller.send(.leSetExtendedAdvertisingEnable(true, handle: Self.advertisingSet))
        } else {
            try await controller.send(.leSetRandomAddress(address))
            try await controller.send(
                .leSetAdvertisingParameters(
                    minimumInterval: interval.lowerBound, maximumInterval: interval.upperBound, type: .nonConnectableUndirected,
                    ownAddressRandom: true))
            try await controller.send(.leSetAdvertisingData(data))
            try await controller.send(.leSetAdvertisingEnable(true))
        }
        advertising = true
        if let sinceDisabled { lastAdvertisingGap = sinceDisabled.elapsed }
        return address
    }

    package func stopAdvertising() async throws {
        guard advertising else { return }
        try await controller.send(extended ? .leSetExtendedAdvertisingEnable(false, handle: Self.advertisingSet) : .leSetAdvertisingEnable(false))
        advertising = false
    }

    /// 60 ms windows back to back.
    package func startScanning() async throws {
        if extended {
            try await controller.send(.leSetExtendedScanParameters(interval: 0x0060, window: 0x0060))
            try await controller.send(.leSetExtendedScanEnable(true, filterDuplicates: false))
        } else {
            try await controller.send(.leSetScanParameters(active: false, interval: 0x0060, window: 0x0060))
            try await controller.send(.leSetScanEnable(true, filterDuplicates: false))
        }
    }

    /// The disable, then the drain: every report the controller sent before its completion is
    /// in the scanner's hands (and so in the window being closed) when this returns.
    package func stopScanning() async throws {
        let completion = try await controller.sendMarked(
            extended ? .leSetExtendedScanEnable(false, filterDuplicates: false) : .leSetScanEnable(false, filterDuplicates: false))
        await drain(completion.reportsBefore)
    }
}

extension HCIRadio {
    /// An HCI advertising report as a scan window counts it, by the one rule of what a report holds
    /// (`AdvertisingReport.content`): 0xFD6F service data that parses is a sighting (a scan
    /// response's too), other frames are `other`, a GAEN frame that does not parse is `malformed`.
    package static func report(_ report: AdvertisingReport) -> RadioReport {
        switch report.content {
        case .exposure(let payload): .sighting(Sighting(payload: payload, rssi: report.rssi, address: report.address))
        case .other: .other
        case .malformed: .malformed
        }
    }
}
