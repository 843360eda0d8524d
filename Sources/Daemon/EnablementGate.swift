// SPDX-License-Identifier: GPL-3.0-or-later

import Radio

/// Whether Exposure Notification is on: set by the manager (SetEnabled), followed by the radio
/// services, which advertise and scan only while it is.
public final class EnablementGate: Sendable {
    private let observed: ObservedValue<Bool>

    public init(enabled: Bool) {
        observed = ObservedValue(enabled)
    }

    public var isEnabled: Bool { observed.value }

    public func set(_ enabled: Bool) { observed.set(enabled) }

    /// The current value, then each change.
    public func updates() -> AsyncStream<Bool> { observed.updates() }

    /// Returns when the gate has `value` (at once if it has).
    public func wait(for value: Bool) async {
        for await enabled in updates() where enabled == value { return }
    }
}
