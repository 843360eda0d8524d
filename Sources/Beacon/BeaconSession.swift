// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
package import ENCrypto
package import KeySchedule
package import Logging
package import GaendConfiguration

/// One beacon on one back end: the advertiser, the scanner and their timeline, built, run,
/// interrupted and finished the same way whatever the back end. The radio services (HCI, BlueZ)
/// only decide when: on connection, after a fault, at shutdown or when the owner disables.
package final class BeaconSession: Sendable {
    package let advertiser: Advertiser
    package let scanner: Scanner
    let log: ContactLogWriter
    let settings: RadioSettings
    /// Where scan windows and rotations pass (the continuous clock; a test's clock).
    let monotonic: any Clock<Duration>
    /// Where rotation delays and the pauses between scan windows are drawn.
    let random: any RandomBytesSource
    let logger: Logger

    package init(
        radio: any BeaconRadio, keys: KeySchedule, log: ContactLogWriter, clock: any WallClock, monotonic: any Clock<Duration> = ContinuousClock(),
        random: any RandomBytesSource = SystemRandom(), settings: RadioSettings, onAir: OnAirBoard = OnAirBoard(), logger: Logger
    ) throws(CryptoError) {
        advertiser = try Advertiser(radio: radio, keys: keys, clock: clock, random: random, settings: settings, onAir: onAir, logger: logger)
        self.random = random
        scanner = Scanner(radio: radio, log: log, clock: clock, monotonic: monotonic, settings: settings, logger: logger)
        self.log = log
        self.settings = settings
        self.monotonic = monotonic
        self.logger = logger
    }

    /// Advertising on (`started` is told once it is), then scan windows and rotations until
    /// cancelled or a radio error.
    package func run(started: @Sendable () async -> Void = {}) async throws {
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
