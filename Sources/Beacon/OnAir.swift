// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Conditions
import Synchronization

/// What the beacon has on the air, for the owner's status: since when it advertises, from which
/// address, the interval of the RPI it sends (never the RPI itself: status is readable by every
/// local user) and when address and RPI change next.
package struct OnAir: Sendable, Equatable {
    /// When advertising began; rotations do not move it, a stop ends it.
    package var since: UnixTime
    /// The address advertised from, when the back end uses ours (HCI); `nil` when the host stack
    /// picks its own (bluetoothd).
    package var address: BluetoothAddress?
    /// The 10-minute interval the RPI on the air was derived for.
    package var interval: ENIntervalNumber
    /// When the next rotation is due; `nil` until it is scheduled.
    package var nextRotation: UnixTime?

    package init(since: UnixTime, address: BluetoothAddress?, interval: ENIntervalNumber, nextRotation: UnixTime? = nil) {
        self.since = since
        self.address = address
        self.interval = interval
        self.nextRotation = nextRotation
    }
}

/// The beacon's `OnAir`, written by the advertiser and read by whoever reports status.
package final class OnAirBoard: Sendable {
    private let state = Mutex<OnAir?>(nil)

    package init() {}

    /// Signalled after every `update` that changed what is on the air.
    package let changes = Changes()

    package var value: OnAir? { state.withLock { $0 } }

    /// Changes what is on the air; `nil` when advertising stopped.
    package func update(_ change: (inout OnAir?) -> Void) {
        let changed = state.withLock { state in
            let before = state
            change(&state)
            return state != before
        }
        if changed { changes.signal() }
    }
}
