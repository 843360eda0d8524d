// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import Conditions
package import ENCore
import ENCrypto
package import GaendAPI
package import KeySchedule
package import Logging
package import Beacon
package import GaendConfiguration

/// What every radio service needs to run the beacon, whatever the back end: the keys, the contact
/// log, the clocks, the radio settings, the status to report and the owner's switch. One value,
/// so the HCI and BlueZ services take the same thing and build their sessions the same way.
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
    func session(on radio: any BeaconRadio) throws(CryptoError) -> BeaconSession {
        try BeaconSession(
            radio: radio, keys: keys, log: log, clock: clock, monotonic: monotonic, settings: settings, onAir: onAir, untrusted: untrusted,
            logger: logger)
    }
}

/// A radio service, seen through its context.
protocol BeaconService {
    var beacon: BeaconContext { get }
}

extension BeaconService {
    var gate: EnablementGate { beacon.gate }
    var status: RadioStatusBoard { beacon.status }
    var logger: Logger { beacon.logger }
    var monotonic: any Clock<Duration> { beacon.monotonic }
}
