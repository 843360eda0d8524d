// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
public import ENCrypto
public import HCI
public import KeySchedule
public import Logging

/// Broadcasts the current RPI and AEM as a legacy ADV_NONCONN_IND from a fresh non-resolvable
/// private address, and rotates both together: advertising off, new address, new data, on, as one
/// transaction, so that an RPI is never seen from two addresses or an address with two RPIs.
public actor Advertiser {
    private let controller: HCIController
    private let keys: KeySchedule
    private let clock: any WallClock
    private let random: any RandomBytesSource
    private let settings: RadioSettings
    private let logger: Logger
    private let crypto: ExposureKeyCrypto
    private var txPower: Int8 = 0
    private var enabled = false
    /// Extended advertising commands (with a legacy PDU) when the controller has them; legacy ones
    /// otherwise. A controller takes one family or the other, never both.
    private var extended = false
    static let advertisingSet: UInt8 = 0
    /// What is on the air now.
    public private(set) var current: (address: BluetoothAddress, rpi: RollingProximityIdentifier, key: TemporaryExposureKey)?
    public private(set) var rotations = 0
    /// How long the last rotation had advertising off: from the disable's completion to the enable's.
    public private(set) var lastRotationGap: Duration?

    public init(
        controller: HCIController, keys: KeySchedule, clock: any WallClock, random: any RandomBytesSource = SystemRandom(),
        settings: RadioSettings, logger: Logger = Logger(label: "gaend.advertiser")
    ) throws(CryptoError) {
        self.controller = controller
        self.keys = keys
        self.clock = clock
        self.random = random
        self.settings = settings
        self.logger = logger
        crypto = try ExposureKeyCrypto()
    }

    /// Starts advertising, with the controller's TX power unless configured, through extended
    /// commands when `extended`.
    public func start(controllerTxPower: Int8, extended: Bool = false) async throws {
        txPower = settings.txPower ?? controllerTxPower
        self.extended = extended
        try await rotate()
    }

    /// One rotation: the RPI of the current interval under the current key, a new address.
    public func rotate() async throws {
        let key = try await keys.currentKey()
        guard let interval = ENIntervalNumber(containing: clock.now()) else { return }
        let (rpik, aemk) = crypto.keys(for: key.keyData)
        let rpi = crypto.rpi(rpik: rpik, interval: interval)
        let metadata = BluetoothMetadata.version1_1(txPower: txPower, calibrationConfidence: settings.calibrationConfidence)
        let frame = ExposureNotificationPayload(rpi: rpi, aem: crypto.aem(for: metadata, aemk: aemk, rpi: rpi)).advertisingData()
        // (A typed-throws closure here crashes Swift 6.3.1's IR generation; bytes16() avoids it.)
        let address = BluetoothAddress.nonResolvablePrivate(random: Array(try random.bytes16().bytes.prefix(6)))

        let monotonic = ContinuousClock()
        var disabledAt: ContinuousClock.Instant?
        if enabled {
            try await controller.send(extended ? .leSetExtendedAdvertisingEnable(false, handle: Self.advertisingSet) : .leSetAdvertisingEnable(false))
            enabled = false
            disabledAt = monotonic.now
        }
        let spacing = settings.advertisingInterval
        if extended {
            try await controller.send(
                .leSetExtendedAdvertisingParameters(handle: Self.advertisingSet, minimumInterval: spacing.lowerBound, maximumInterval: spacing.upperBound))
            try await controller.send(.leSetAdvertisingSetRandomAddress(handle: Self.advertisingSet, address))
            try await controller.send(.leSetExtendedAdvertisingData(handle: Self.advertisingSet, frame))
            try await controller.send(.leSetExtendedAdvertisingEnable(true, handle: Self.advertisingSet))
        } else {
            try await controller.send(.leSetRandomAddress(address))
            try await controller.send(
                .leSetAdvertisingParameters(
                    minimumInterval: spacing.lowerBound, maximumInterval: spacing.upperBound, type: .nonConnectableUndirected,
                    ownAddressRandom: true))
            try await controller.send(.leSetAdvertisingData(frame))
            try await controller.send(.leSetAdvertisingEnable(true))
        }
        enabled = true
        if let disabledAt { lastRotationGap = monotonic.now - disabledAt }
        current = (address, rpi, key)
        rotations += 1
        logger.debug("advertising rotated", metadata: ["address": "\(address)", "interval": "\(interval)"])
    }

    /// Stops advertising (at shutdown and when disabled).
    public func stop() async throws {
        guard enabled else { return }
        try await controller.send(extended ? .leSetExtendedAdvertisingEnable(false, handle: Self.advertisingSet) : .leSetAdvertisingEnable(false))
        enabled = false
    }

    /// Seconds until the next rotation: a random draw from the rotation interval, cut short at the
    /// next UTC midnight so that a new TEK goes on the air at once.
    public func nextRotationDelay() -> Int64 {
        Self.rotationDelay(drawn: Int64(Int.random(in: settings.rotationInterval)), now: clock.now())
    }

    /// `drawn` seconds, or fewer if UTC midnight (a new key) comes first; at least one second.
    public static func rotationDelay(drawn: Int64, now: UnixTime) -> Int64 {
        let untilMidnight = UTCDay(containing: now).advanced(by: 1).start.seconds - now.seconds
        return max(1, min(drawn, untilMidnight))
    }
}
