// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore

/// What the writer found and repaired when it opened the log.
public struct RecoveryReport: Hashable, Sendable {
    /// Segments whose torn tail was cut off, with the bytes cut.
    public var truncated: [UTCDay: Int64] = [:]
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
