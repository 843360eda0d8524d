// SPDX-License-Identifier: GPL-3.0-or-later

package import Conditions

/// Whether Exposure Notification is on: set by the manager (SetEnabled), followed by the radio
/// services, which advertise and scan only while it is.
package final class EnablementGate: Sendable {
    private let observed: ObservedValue<Bool>

    package init(enabled: Bool) {
        observed = ObservedValue(enabled)
    }

    package var isEnabled: Bool { observed.value }

    package func set(_ enabled: Bool) { observed.set(enabled) }

    /// The current value, then each change.
    package func updates() -> AsyncStream<Bool> { observed.updates() }
}
