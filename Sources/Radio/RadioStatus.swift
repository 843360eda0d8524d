// SPDX-License-Identifier: GPL-3.0-or-later

public import Logging

/// What the radio is doing, as the daemon's D-Bus API reports it.
public enum RadioStatus: String, Sendable, Hashable {
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
public final class RadioStatusBoard: Sendable {
    private let observed: ObservedValue<RadioStatus>
    private let logger: Logger

    public init(_ initial: RadioStatus = .starting, logger: Logger = Logger(label: "gaend.radio")) {
        observed = ObservedValue(initial)
        self.logger = logger
    }

    public var status: RadioStatus { observed.value }

    public func set(_ status: RadioStatus, reason: String? = nil) {
        guard observed.set(status) else { return }
        var metadata: Logger.Metadata = ["status": "\(status.rawValue)"]
        if let reason { metadata["reason"] = "\(reason)" }
        logger.notice("radio status", metadata: metadata)
    }

    /// The current status, then each change.
    public func updates() -> AsyncStream<RadioStatus> { observed.updates() }
}
