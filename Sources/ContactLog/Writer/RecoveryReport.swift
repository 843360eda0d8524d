// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// What the writer found and repaired when it opened the log.
package struct RecoveryReport: Hashable, Sendable {
    /// Segments whose torn tail was cut off, with the bytes cut.
    package var truncated: [UTCDay: Int64] = [:]
    /// Segments copied aside before their tail was cut because it was more than a torn record's
    /// worth, with the copy's path (`YYYY-MM-DD.log.damaged-<unix time>`).
    package var copiedAside: [UTCDay: String] = [:]
    /// Segments with more than a torn record's worth of damage at the end that could not be copied
    /// aside, with the reason: the damage was kept, not cut (only a partial record was).
    package var damageKept: [UTCDay: String] = [:]
    /// Set-aside files deleted: the oldest beyond the per-day bound, and those past the retention.
    package var asideDeleted: [String] = []
    /// Damaged records in the middle of segments, skipped but kept on disk.
    package var corruptRecords: [UTCDay: Int] = [:]
    /// Records whose times do not fall in their segment's day.
    package var outOfDayRecords: [UTCDay: Int] = [:]
    /// Segments whose header could not be read; moved aside, never overwritten.
    package var setAside: [UTCDay: String] = [:]
    /// Segments deleted because they are older than the retention.
    package var expired: [UTCDay] = []

    package init() {}
}
