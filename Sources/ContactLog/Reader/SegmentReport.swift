// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// What reading one day segment found: its health, record by record.
package struct SegmentReport: Hashable, Sendable {
    /// A record that was not used, and where it is.
    package struct Problem: Hashable, Sendable, CustomStringConvertible {
        package enum Kind: String, Hashable, Sendable {
            /// Checksum mismatch or unknown type, with intact records after it.
            case corrupt
            /// Intact, but its times do not fall in the segment's day.
            case outOfDay = "out-of-day"
        }

        package var kind: Kind
        /// Byte offset of the record in the file.
        package var offset: Int64
        package var reason: String

        package var description: String { "\(kind.rawValue) record at byte \(offset): \(reason)" }
    }

    package var day: UTCDay
    package var path: String
    package var size: Int64
    /// Why the whole file could not be read, if it could not (then nothing else here is meaningful).
    package var unreadable: String?
    /// A header whose checksum fails though its fields are version 1's for the file's day: the
    /// records are read, each judged by its own checksum, and the damage is reported.
    package var headerDamage: String?
    package var aggregates: Int = 0
    package var scanWindows: Int = 0
    /// The first `listedProblemsLimit` problems, in file order; `corruptRecords` and
    /// `outOfDayRecords` count all of them. Listing every one would let a damaged segment cost
    /// memory in proportion to its size.
    package internal(set) var problems: [Problem] = []
    /// Damaged records in the middle: checksum mismatch or unknown type, with intact records after.
    package internal(set) var corruptRecords = 0
    /// Intact records whose times do not fall in the segment's day.
    package internal(set) var outOfDayRecords = 0
    /// Bytes at the end that are not whole intact records: what a crash mid-write leaves. The writer
    /// cuts them off when it opens the segment; readers leave them alone.
    package var tornTailBytes: Int64 = 0
    /// Offset where the torn tail starts (the file's intended end).
    package var intactEnd: Int64 = 0

    package init(day: UTCDay, path: String, size: Int64) {
        self.day = day
        self.path = path
        self.size = size
    }

    /// How many problems `problems` lists at most.
    package static let listedProblemsLimit = 100

    /// Nothing torn, corrupt, out of day or unreadable.
    package var isIntact: Bool {
        unreadable == nil && headerDamage == nil && corruptRecords == 0 && outOfDayRecords == 0 && tornTailBytes == 0
    }

    /// Counts `count` consecutive damaged records from byte `start`, listing those the limit allows.
    mutating func addCorrupt(run start: Int64, count: Int) {
        corruptRecords += count
        let listed = min(count, Self.listedProblemsLimit - problems.count)
        for index in 0..<max(0, listed) {
            problems.append(
                Problem(kind: .corrupt, offset: start + Int64(index * SegmentFormat.recordSize), reason: "checksum mismatch or unknown record type"))
        }
    }

    /// Counts an intact record outside the day, listing it if the limit allows.
    mutating func addOutOfDay(at offset: Int64, reason: String) {
        outOfDayRecords += 1
        if problems.count < Self.listedProblemsLimit { problems.append(Problem(kind: .outOfDay, offset: offset, reason: reason)) }
    }
}
