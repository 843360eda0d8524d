// SPDX-License-Identifier: GPL-3.0-or-later

package import Logging
import Conditions
import Synchronization

/// What the radio is doing, as the daemon's D-Bus API reports it.
package enum RadioStatus: String, Sendable, Hashable {
    /// Not yet running (connecting, initializing).
    case starting
    /// Advertising and scanning.
    case active
    /// The adapter is powered off (BlueZ), or the controller is not reachable.
    case bluetoothOff = "bluetooth-off"
    /// No radio configured.
    case none
}

/// The radio's current status, set by the radio service and read by whoever reports it; every
/// change is logged once.
package final class RadioStatusBoard: Sendable {
    private let observed: ObservedValue<RadioStatus>
    private let why = Mutex<String?>(nil)
    private let logger: Logger

    package init(_ initial: RadioStatus = .starting, logger: Logger = Logger(label: "gaend.radio")) {
        observed = ObservedValue(initial)
        self.logger = logger
    }

    package var status: RadioStatus { observed.value }

    /// Why the status is what it is, as the last `set` said (why bluetooth is off).
    package var reason: String? { why.withLock { $0 } }

    package func set(_ status: RadioStatus, reason: String? = nil) {
        why.withLock { $0 = reason }
        guard observed.set(status) else { return }
        var metadata: Logger.Metadata = ["status": "\(status.rawValue)"]
        if let reason { metadata["reason"] = "\(reason)" }
        logger.notice("radio status", metadata: metadata)
    }

    /// The current status, then each change.
    package func updates() -> AsyncStream<RadioStatus> { observed.updates() }
}
