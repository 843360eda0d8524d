// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import ENCrypto
package import KeySchedule
package import Logging
package import GaendConfiguration

/// Broadcasts the current RPI and AEM as a legacy ADV_NONCONN_IND from a fresh non-resolvable
/// private address, and rotates both together: advertising off, new address, new data, on, as one
/// transaction, so that an RPI is never seen from two addresses or an address with two RPIs.
package actor Advertiser {
    private let radio: any BeaconRadio
    private let keys: KeySchedule
    private let clock: any WallClock
    private let random: any RandomBytesSource
    private let settings: RadioSettings
    private let logger: Logger
    private let onAir: OnAirBoard
    private let crypto: ExposureKeyCrypto
    private var txPower: Int8 = 0
    /// What is on the air now.
    package private(set) var current: (address: BluetoothAddress, rpi: RollingProximityIdentifier, key: TemporaryExposureKey)?
    package private(set) var rotations = 0
    /// When the key schedule replaced the key on the air before its time: the timeline rotates.
    package nonisolated var keyReplacements: KeyReplacements { keys.replacements }

    package init(
        radio: any BeaconRadio, keys: KeySchedule, clock: any WallClock, random: any RandomBytesSource = SystemRandom(),
        settings: RadioSettings, onAir: OnAirBoard = OnAirBoard(), logger: Logger = Logger(label: "gaend.advertiser")
    ) throws(CryptoError) {
        self.onAir = onAir
        self.radio = radio
        self.keys = keys
        self.clock = clock
        self.random = random
        self.settings = settings
        self.logger = logger
        crypto = try ExposureKeyCrypto()
    }

    /// Starts advertising, with the radio's TX power unless one is configured.
    package func start() async throws {
        txPower = if let configured = settings.txPower { configured } else { await radio.advertisingTxPower }
        // A new session: advertising starts now, whatever a session cut short by a fault left.
        onAir.update { $0 = nil }
        try await rotate()
    }

    /// One rotation: the RPI of the current interval under the current key, a new address.
    package func rotate() async throws {
        let key = try await keys.currentKey()
        guard let interval = ENIntervalNumber(containing: clock.now()) else { return }
        let (rpik, aemk) = crypto.keys(for: key.keyData)
        let rpi = crypto.rpi(rpik: rpik, interval: interval)
        let metadata = BluetoothMetadata.version1_1(txPower: txPower, calibrationConfidence: settings.calibrationConfidence)
        let payload = ExposureNotificationPayload(rpi: rpi, aem: crypto.aem(for: metadata, aemk: aemk, rpi: rpi))
        // (A typed-throws closure here crashes Swift 6.3.1's IR generation; bytes16() avoids it.)
        let address = BluetoothAddress.nonResolvablePrivate(random: Array(try random.bytes16().bytes.prefix(6)))

        let used = try await radio.advertise(payload, from: address, interval: settings.advertisingInterval)
        current = (address, rpi, key)
        rotations += 1
        let now = clock.now()
        onAir.update { onAir in
            onAir = OnAir(since: onAir?.since ?? now, address: used, interval: interval)
        }
        logger.debug("advertising rotated", metadata: ["address": "\(address)", "interval": "\(interval)"])
    }

    /// Stops advertising (at shutdown and when disabled).
    package func stop() async throws {
        onAir.update { $0 = nil }
        try await radio.stopAdvertising()
    }

    /// Seconds until the next rotation: a random draw from the rotation interval, cut short at the
    /// next UTC midnight so that a new TEK goes on the air at once. The timeline asks once per
    /// rotation, so the time it falls due is recorded here for status (`OnAir.nextRotation`).
    package func nextRotationDelay() -> Int64 {
        var generator = RandomSourceGenerator(random)
        let now = clock.now()
        let delay = Self.rotationDelay(drawn: Int64(Int.random(in: settings.rotationInterval, using: &generator)), now: now)
        onAir.update { $0?.nextRotation = now.adding(seconds: delay) }
        return delay
    }

    /// `drawn` seconds, or fewer if UTC midnight (a new key) comes first; at least one second.
    package static func rotationDelay(drawn: Int64, now: UnixTime) -> Int64 {
        let untilMidnight = UTCDay(containing: now).advanced(by: 1).start.seconds - now.seconds
        return max(1, min(drawn, untilMidnight))
    }
}
