// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
package import ENCrypto
package import KeySchedule
package import Logging
package import GaendConfiguration

/// One beacon on one back end: the advertiser, the scanner and their timeline, built, run,
/// interrupted and finished the same way whatever the back end. `BeaconDriver` decides when: on
/// connection, after a fault, at shutdown or when the owner disables.
package final class BeaconSession: Sendable {
    package let advertiser: Advertiser
    package let scanner: Scanner
    let radio: any BeaconRadio
    let log: ContactLogWriter
    let clock: any WallClock
    let settings: RadioSettings
    /// Where scan windows and rotations pass (the continuous clock; a test's clock).
    let monotonic: any Clock<Duration>
    /// Where rotation delays and the pauses between scan windows are drawn.
    let random: any RandomBytesSource
    let logger: Logger

    package init(
        radio: any BeaconRadio, keys: KeySchedule, log: ContactLogWriter, clock: any WallClock, monotonic: any Clock<Duration> = ContinuousClock(),
        random: any RandomBytesSource = SystemRandom(), settings: RadioSettings, onAir: OnAirBoard = OnAirBoard(), untrusted: UntrustedWindows? = nil,
        logger: Logger
    ) throws(CryptoError) {
        advertiser = try Advertiser(radio: radio, keys: keys, clock: clock, random: random, settings: settings, onAir: onAir, logger: logger)
        self.random = random
        self.radio = radio
        self.clock = clock
        scanner = Scanner(radio: radio, log: log, clock: clock, monotonic: monotonic, settings: settings, untrusted: untrusted, logger: logger)
        self.log = log
        self.settings = settings
        self.monotonic = monotonic
        self.logger = logger
    }

    /// Advertising on (`started` is told once it is), then scan windows and rotations until
    /// cancelled or a radio error. On a wall clock that cannot be trusted nothing is broadcast (no
    /// phone would match its RPIs): scan windows only, held on the boot clock. The radio service
    /// starts the session again when the clock is set or its trust changes.
    package func run(started: @Sendable () async -> Void = {}) async throws {
        if let distrust = clock.distrust {
            logger.notice("scanning only: nothing is broadcast while the clock is not trusted", metadata: ["reason": "\(distrust)"])
            // What an earlier session of this radio left on the air (bluetoothd keeps a registration) goes.
            try await advertiser.stop()
            try await BeaconTimeline.run(advertiser: nil, scanner: scanner, settings: settings, clock: monotonic, random: random)
            return
        }
        try await advertiser.start()
        await started()
        try await BeaconTimeline.run(advertiser: advertiser, scanner: scanner, settings: settings, clock: monotonic, random: random)
    }

    /// After a fault or a cancelled run: the open window is appended; scanning is not asked to
    /// stop (the radio may be gone or being reset).
    package func interrupt() async {
        do {
            try await scanner.endWindow(stopScanning: false)
        } catch {
            logger.warning("writing the interrupted scan window", metadata: ["error": "\(error)"])
        }
    }

    /// Disabled beside a host that stays (bluetoothd): advertising and scanning off there. The
    /// window was written when the beacon stopped.
    package func silence() async {
        try? await advertiser.stop()
        try? await radio.stopScanning()
    }

    /// Shutdown or disable: scanning stopped and the open window appended, advertising off, the
    /// log synced.
    package func finish() async {
        do {
            try await scanner.endWindow()
        } catch {
            logger.warning("closing the scan window", metadata: ["error": "\(error)"])
        }
        try? await advertiser.stop()
        try? await log.sync()
    }
}
