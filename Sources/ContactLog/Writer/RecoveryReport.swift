// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore

/// What the writer found and repaired when it opened the log.
public struct RecoveryReport: Hashable, Sendable {
    /// Segments whose torn tail was cut off, with the bytes cut.
    public var truncated: [UTCDay: Int64] = [:]
    /// Segments copied aside before their tail was cut because it was more than a torn record's
    /// worth, with the copy's path (`YYYY-MM-DD.log.damaged-<unix time>`).
    public var copiedAside: [UTCDay: String] = [:]
    /// Segments with more than a torn record's worth of damage at the end that could not be copied
    /// aside, with the reason: the damage was kept, not cut (only a partial record was).
    public var damageKept: [UTCDay: String] = [:]
    /// Set-aside files deleted: the oldest beyond the per-day bound, and those past the retention.
    public var asideDeleted: [String] = []
    /// Damaged records in the middle of segments, skipped but kept on disk.
    public var corruptRecords: [UTCDay: Int] = [:]
    /// Records whose times do not fall in their segment's day.
    public var outOfDayRecords: [UTCDay: Int] = [:]
    /// Segments whose header could not be read; moved aside, never overwritten.
    public var setAside: [UTCDay: String] = [:]
    /// Segments deleted because they are older than the retention.
    public var expired: [UTCDay] = []

    public init() {}
}
