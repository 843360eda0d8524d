// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Storage

/// The logged RPIs of some days, ready for matching: "was this RPI heard?" in one probe of a small
/// filter, and its aggregates, read back from the segments, when it was.
///
/// Memory does not hold the records: per record a 4-byte link to the previous record of the same
/// RPI, per distinct RPI an 8-byte table slot (a 32-bit fingerprint and the newest record) and 32
/// bits in the filter of each day it was heard (`DayFilters`). A hit reads its records again from the segment, through the descriptor the index
/// was built from, and checks each one's checksum and RPI. A crowded fortnight (2.5 M aggregates
/// of 100,000 RPIs) costs about 12 MiB instead of the records' 115 MB; `MatchingPartitions` splits
/// larger logs into indexes of whole days under a budget (docs/contact-log.md, "Matching in
/// bounded memory").
///
/// Fingerprints are the top 32 bits of a hash keyed with a random seed per build, so that a peer
/// broadcasting chosen RPIs cannot pile them into one probe chain. Two RPIs with one fingerprint
/// share a chain; every read checks the RPI, so that costs a read, never a wrong answer.
/// Immutable once built; `aggregates(of:)` may be called from several tasks at once (pread).
package final class MatchingIndex: @unchecked Sendable {
    // @unchecked: every stored property is written only in init and read-only afterwards; the
    // segment files are only read with pread, which needs no lock.

    /// Aggregates indexed.
    package let aggregateCount: Int
    /// Distinct RPIs among them (distinct fingerprints: two RPIs in 2^32 may count as one, and so do
    /// RPIs a peer chose to fold alike, `DayFilters.hash`).
    package let distinctRPIs: Int
    /// The segments read, with their health.
    package let segments: [SegmentReport]
    /// The days indexed, oldest first.
    package let days: [UTCDay]

    private let files: [AppendOnlyFile]
    /// The day of each file (`days` also has the days whose segment could not be opened).
    private let fileDays: [UTCDay]
    /// The first record number of each day's segment (a record's number is its base plus its
    /// position in the file, counted in records after the header).
    private let bases: [Int]
    /// For each day's records, by position: 1 + the number of the previous record with the same
    /// fingerprint, 0 for none (and for records that are not aggregates). One exact array a day, so
    /// that the build never copies a growing array.
    private let links: [[UInt32]]
    private let table: FingerprintTable
    /// The days' filters: a key's RPI is asked of its own day's.
    package let filters: DayFilters

    /// Builds the index of the days in `range` (every day if `nil`), whatever its size.
    package convenience init(
        reader: ContactLogReader, days range: ClosedRange<UTCDay>? = nil,
        seed: (UInt64, UInt64) = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max) | 1)
    ) throws(ContactLogError) {
        let files = try reader.segmentFiles().filter { range?.contains($0.0) ?? true }.sorted { $0.0 < $1.0 }
        self.init(reader: reader, candidates: files[...], budgetBytes: .max, seed: seed)
    }

    /// Builds the index of the first days of `candidates`: at least one, and each further one only
    /// while its worst case (every record a new RPI) keeps the index within `budgetBytes`.
    init(reader: ContactLogReader, candidates: ArraySlice<(UTCDay, String)>, budgetBytes: Int, seed: (UInt64, UInt64)) {
        let seed = (seed.0, seed.1 | 1)
        var table = FingerprintTable()
        var links = [[UInt32]]()
        var linkCount = 0
        var files = [AppendOnlyFile]()
        var bases = [Int]()
        var days = [UTCDay]()
        var fileDays = [UTCDay]()
        var reports = [SegmentReport]()
        var aggregates = 0
        var filters = DayFilters.Builder()
        for (day, name) in candidates {
            let path = reader.directory.path(of: name)
            let file: AppendOnlyFile
            let size: Int64
            do {
                file = try AppendOnlyFile(path: path, mode: .readOnly)
                size = try file.size()
            } catch {
                var report = SegmentReport(day: day, path: path, size: 0)
                report.unreadable = "\(error)"
                reports.append(report)
                days.append(day)
                continue
            }
            let records = max(0, Int(size) - SegmentFormat.headerSize) / SegmentFormat.recordSize
            if !files.isEmpty,
                linkCount * 4 + records * 4 + FingerprintTable.bytes(holding: table.distinct + records)
                    + filters.memoryBytes + DayFilters.bytes(holding: records) > budgetBytes
            {
                break
            }
            let base = linkCount
            var dayLinks = [UInt32](repeating: 0, count: records)
            let report = SegmentReader.scan(file: file, day: day) { record in
                guard record.type == .aggregate else { return }
                let number = Int(record.offset - Int64(SegmentFormat.headerSize)) / SegmentFormat.recordSize
                // A record appended after the size was read waits for the next build.
                guard number < records else { return }
                let rpi = Bytes16(loadingFrom: record.raw + SegmentFormat.AggregateField.rpi)
                let fingerprint = DayFilters.fingerprint(rpi, seed: seed)
                dayLinks[number] = table.insert(fingerprint, record: UInt32(base + number + 1))
                aggregates += 1
            }
            // The RPIs heard this day are the table's entries whose newest record is this day's.
            let newest = UInt32(base + 1)
            var distinct = 0
            table.forEachFingerprint(newestFrom: newest) { _ in distinct += 1 }
            filters.add(day: day, distinct: distinct) { body in table.forEachFingerprint(newestFrom: newest, body) }
            reports.append(report)
            links.append(dayLinks)
            linkCount += records
            files.append(file)
            bases.append(base)
            days.append(day)
            fileDays.append(day)
        }
        self.days = days
        self.files = files
        self.bases = bases
        self.links = links
        self.table = table
        segments = reports
        aggregateCount = aggregates
        distinctRPIs = table.distinct
        self.fileDays = fileDays
        self.filters = filters.build(seed: seed)
    }

    /// Whether `rpi` was heard in the indexed days.
    package func contains(_ rpi: RollingProximityIdentifier) -> Bool {
        mayContain(rpi) && !aggregates(of: rpi).isEmpty
    }

    /// Whether `rpi` may have been heard on any indexed day: no false negatives, about 0.4 % false
    /// positives a day. Matching asks `filters.candidates` instead, of each RPI's own day.
    package func mayContain(_ rpi: RollingProximityIdentifier) -> Bool {
        filters.mayContain(rpi)
    }

    /// The aggregates of `rpi`, newest first, read from the segments.
    package func aggregates(of rpi: RollingProximityIdentifier) -> [ContactAggregate] {
        let fingerprint = DayFilters.fingerprint(rpi.bytes, seed: filters.seed)
        var result = [ContactAggregate]()
        var link = table.head(of: fingerprint)
        var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while link != 0 {
            let number = Int(link) - 1
            // The day: the last base at or below the number.
            var low = 0
            var high = bases.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if bases[middle] <= number { low = middle } else { high = middle - 1 }
            }
            link = links[low][number - bases[low]]
            let offset = Int64(SegmentFormat.headerSize + (number - bases[low]) * SegmentFormat.recordSize)
            let decoded: ContactLogRecord? = withUnsafeMutableBytes(of: &raw) { buffer in
                guard (try? files[low].read(into: buffer, at: offset)) == SegmentFormat.recordSize, RecordCodec.isIntact(buffer.baseAddress!),
                    Bytes16(loadingFrom: buffer.baseAddress! + SegmentFormat.AggregateField.rpi) == rpi.bytes
                else { return nil }
                return try? RecordCodec.decode(buffer.baseAddress!, day: fileDays[low])
            }
            if case .aggregate(let aggregate)? = decoded { result.append(aggregate) }
        }
        return result
    }

    /// Bytes the index holds: the links, the table and the filter.
    package var memoryBytes: Int { links.reduce(0) { $0 + $1.count * 4 } + table.memoryBytes + filters.memoryBytes }
}

/// Fingerprint → newest record, open addressing with linear probing, at most three quarters full;
/// grows by doubling (a slot's home is the top bits of its fingerprint, so no RPI is needed).
private struct FingerprintTable {
    /// Each slot: fingerprint (high 32 bits) and 1 + the newest record number (low 32); 0 is empty.
    private(set) var slots = [UInt64](repeating: 0, count: 1024)
    private var bits = 10
    private(set) var distinct = 0

    static func slotCount(holding count: Int) -> Int {
        var slots = 1024
        while slots * 3 / 4 < count { slots <<= 1 }
        return slots
    }

    /// The table's size once it holds `count` fingerprints (with the old table while doubling).
    static func bytes(holding count: Int) -> Int { slotCount(holding: count) * 8 * 3 / 2 }

    var memoryBytes: Int { slots.count * 8 }

    /// Makes `record` the newest of `fingerprint`; returns the previous newest (0 for none).
    mutating func insert(_ fingerprint: UInt32, record: UInt32) -> UInt32 {
        let slot = find(fingerprint)
        let previous = slots[slot]
        slots[slot] = UInt64(fingerprint) << 32 | UInt64(record)
        if previous == 0 {
            distinct += 1
            if distinct > slots.count * 3 / 4 { grow() }
        }
        return UInt32(truncatingIfNeeded: previous)
    }

    func head(of fingerprint: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: slots[find(fingerprint)])
    }

    private func find(_ fingerprint: UInt32) -> Int {
        let mask = slots.count - 1
        var index = Int(fingerprint >> UInt32(32 - bits))
        while true {
            let value = slots[index]
            if value == 0 || UInt32(truncatingIfNeeded: value >> 32) == fingerprint { return index }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        bits += 1
        slots = [UInt64](repeating: 0, count: old.count * 2)
        for value in old where value != 0 {
            slots[find(UInt32(truncatingIfNeeded: value >> 32))] = value
        }
    }

    /// Calls `body` with each fingerprint whose newest record is `record` (1 + its number) or later.
    func forEachFingerprint(newestFrom record: UInt32, _ body: (UInt32) -> Void) {
        for value in slots where value != 0 && UInt32(truncatingIfNeeded: value) >= record { body(UInt32(truncatingIfNeeded: value >> 32)) }
    }
}
