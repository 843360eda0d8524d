// SPDX-License-Identifier: GPL-3.0-or-later

package import GaendAPI

/// What the status LED shows, decided from Manager1's Status and whether an exposure is in the
/// last 14 days, and how the kernel shows it: each state is one LED trigger the kernel runs by
/// itself, so gaend writes only when the state changes (docs/hook.md has the table).
package enum IndicatorPattern: String, Sendable, Equatable, CaseIterable {
    /// On the air and scanning: a 50 ms blink every 3 s.
    case onAir = "on-air"
    /// An exposure in the last 14 days, whatever the beacon does: blinking 5 times a second.
    case exposed
    /// Scanning only, waiting for a clock it can trust: a 50 ms blink every 10 s.
    case waitingForClock = "waiting-for-clock"
    /// Not working (the radio off or gone, no consent, no radio, starting): steadily off.
    case off

    package static func of(status: Manager1.Status, exposed: Bool) -> IndicatorPattern {
        if exposed { return .exposed }
        switch status {
        case .active: return .onAir
        case .scanning: return .waitingForClock
        case .disabled, .bluetoothOff, .paused, .unknown: return .off
        }
    }

    /// The trigger and its timings (`timer`: milliseconds on, off); `none` with brightness 0 for off.
    package var setting: LEDSetting {
        switch self {
        case .onAir: LEDSetting(trigger: "timer", delayOn: 50, delayOff: 2950)
        case .exposed: LEDSetting(trigger: "timer", delayOn: 100, delayOff: 100)
        case .waitingForClock: LEDSetting(trigger: "timer", delayOn: 50, delayOff: 9950)
        case .off: LEDSetting(trigger: "none", brightness: 0)
        }
    }
}

/// What is written to an LED's sysfs attributes, in this order: the trigger, then its timings or
/// the brightness.
package struct LEDSetting: Sendable, Equatable {
    package var trigger: String
    package var delayOn: Int?
    package var delayOff: Int?
    package var brightness: Int?

    package init(trigger: String, delayOn: Int? = nil, delayOff: Int? = nil, brightness: Int? = nil) {
        self.trigger = trigger
        self.delayOn = delayOn
        self.delayOff = delayOff
        self.brightness = brightness
    }
}
