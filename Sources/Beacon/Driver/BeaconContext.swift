// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import Conditions
package import ENCore
package import ENCrypto
package import KeySchedule
package import Logging
package import GaendConfiguration

/// What the driver needs to run the beacon, whatever the back end: the keys, the contact log, the
/// clocks, the radio settings, the status to report and the owner's switch.
package struct BeaconContext: Sendable {
    package let settings: RadioSettings
    package let keys: KeySchedule
    package let log: ContactLogWriter
    package let clock: any WallClock
    /// Where scan windows, rotations and backoff pass (the continuous clock; a test's clock).
    package let monotonic: any Clock<Duration>
    package let gate: EnablementGate
    package let status: RadioStatusBoard
    /// What is on the air, for Manager1's beacon properties.
    package let onAir: OnAirBoard
    /// Where windows heard on an untrusted clock are held (nil: not kept).
    package let untrusted: UntrustedWindows?
    /// Signalled when the clock is set or its trust changes: the running beacon starts over.
    package let clockShifts: Changes?
    package let logger: Logger

    package init(
        settings: RadioSettings, keys: KeySchedule, log: ContactLogWriter, clock: any WallClock, gate: EnablementGate, status: RadioStatusBoard,
        onAir: OnAirBoard = OnAirBoard(), untrusted: UntrustedWindows? = nil, clockShifts: Changes? = nil, logger: Logger,
        monotonic: any Clock<Duration> = ContinuousClock()
    ) {
        self.untrusted = untrusted
        self.clockShifts = clockShifts
        self.onAir = onAir
        self.settings = settings
        self.keys = keys
        self.log = log
        self.clock = clock
        self.monotonic = monotonic
        self.gate = gate
        self.status = status
        self.logger = logger
    }

    /// A beacon session on `radio`.
    package func session(on radio: any BeaconRadio) throws(CryptoError) -> BeaconSession {
        try BeaconSession(
            radio: radio, keys: keys, log: log, clock: clock, monotonic: monotonic, settings: settings, onAir: onAir, untrusted: untrusted,
            logger: logger)
    }
}
