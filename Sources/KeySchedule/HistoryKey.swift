// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore

/// A key of the device's own history, with what the device knows about it beyond the key itself.
public struct HistoryKey: Hashable, Sendable {
    public var key: TemporaryExposureKey
    /// When the key was made (wall clock, whole seconds).
    public var created: UnixTime
    /// Whether the key was cut short because it was released while current.
    public var shortenedByRelease: Bool

    public init(key: TemporaryExposureKey, created: UnixTime, shortenedByRelease: Bool = false) {
        self.key = key
        self.created = created
        self.shortenedByRelease = shortenedByRelease
    }
}
