// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// A key of the device's own history, with what the device knows about it beyond the key itself.
package struct HistoryKey: Hashable, Sendable {
    package var key: TemporaryExposureKey
    /// When the key was made (wall clock, whole seconds).
    package var created: UnixTime
    /// Whether the key was cut short because it was released while current.
    package var shortenedByRelease: Bool

    package init(key: TemporaryExposureKey, created: UnixTime, shortenedByRelease: Bool = false) {
        self.key = key
        self.created = created
        self.shortenedByRelease = shortenedByRelease
    }
}
