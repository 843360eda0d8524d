// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Storage

/// The logged RPIs of a range of days, ready for matching: "was this RPI heard?" in one probe of a
/// compact hash table, and its aggregates when it was.
///
/// Built in one pass over the segments. The aggregates are kept as their own 48-byte records (the
/// checksum field, already verified, is reused as the link to the next aggregate of the same RPI,
/// and a reserved byte as the day), so the index holds no more than the records themselves plus
/// 8 bytes per table slot. The table is keyed with a random seed per build, so that a peer
/// broadcasting chosen RPIs cannot pile them into one probe chain. Immutable once built.
package final class MatchingIndex: @unchecked Sendable {
    // @unchecked: every stored property is written only in init and read-only afterwards.

    /// Aggregates indexed.
    package let aggregateCount: Int
    /// Distinct RPIs among them.
    package let distinctRPIs: Int
    /// The segments read, with their health.
    package let segments: [SegmentReport]
    /// The days the records came from; a record's day index points here.
    package let days: [UTCDay]

    private let table: RecordTable

    /// Builds the index of the days in `range` (every day if `nil`).
    package init(
        reader: ContactLogReader, days range: ClosedRange<UTCDay>? = nil,
        seed: (UInt64, UInt64) = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max) | 1)
    ) throws(ContactLogError) {
        // A record's day is one byte: the newest 255 days are indexed. gaend keeps 14; a copied or
        // restored log directory may hold any number, and must not trap the reader.
        let files = try reader.segmentFiles().filter { range?.contains($0.0) ?? true }.sorted { $0.0 < $1.0 }.suffix(255)
        // Size everything from the file sizes: an upper bound of the records, so nothing grows.
        var capacity = 0
        for (_, name) in files {
            let size = (try? AtomicFile.size(of: reader.directory.path(of: name))) ?? 0
            capacity += max(0, Int(size) - SegmentFormat.headerSize) / SegmentFormat.recordSize
        }
        let table = RecordTable(capacity: capacity, seed: seed)
        days = files.map(\.0)
        let dayIndex = Dictionary(uniqueKeysWithValues: days.enumerated().map { ($1, UInt8($0)) })
        var lastDay: (UTCDay, UInt8?)?
        let reports = try reader.forEachRawRecord(in: range) { record, day in
            guard record.type == .aggregate else { return }
            if lastDay?.0 != day { lastDay = (day, dayIndex[day]) }
            // A segment created after the listing above waits for the next build.
            guard let index = lastDay?.1 else { return }
            table.insert(record.raw, dayIndex: index)
        }
        self.table = table
        aggregateCount = table.count
        distinctRPIs = table.distinct
        segments = reports
    }

    /// Whether `rpi` was heard in the indexed days.
    @inline(__always)
    package func contains(_ rpi: RollingProximityIdentifier) -> Bool {
        table.mayContain(rpi.bytes) && table.head(of: rpi.bytes) != 0
    }

    /// Whether `rpi` may have been heard: no false negatives, about 1 % false positives. One load
    /// from a bit array small enough to stay in the core's cache, so matching asks this 144 times a
    /// key and goes to the table only for the few that pass.
    @inline(__always)
    package func mayContain(_ rpi: RollingProximityIdentifier) -> Bool {
        table.mayContain(rpi.bytes)
    }

    /// The filter as a value the matcher's inner loop can inline (the index outlives it).
    package var filter: RPIFilter { table.filterView }

    /// The aggregates of `rpi`, newest first.
    package func aggregates(of rpi: RollingProximityIdentifier) -> [ContactAggregate] {
        var result = [ContactAggregate]()
        var link = table.head(of: rpi.bytes)
        while link != 0 {
            let raw = table.record(link - 1)
            let day = days[Int(raw.load(fromByteOffset: SegmentFormat.AggregateField.reserved, as: UInt8.self))]
            if case .aggregate(let aggregate)? = try? RecordCodec.decode(raw, day: day) {
                result.append(aggregate)
            }
            link = raw.loadUnaligned(fromByteOffset: SegmentFormat.AggregateField.checksum, as: UInt32.self)
        }
        return result
    }

    /// Bytes the index holds: the records, the table and the filter.
    package var memoryBytes: Int { table.memoryBytes }
}

/// The storage of a `MatchingIndex`: the copied records and the open-addressing table over them.
/// Owns its two buffers; filled during the index's init, read-only after.
private final class RecordTable {
    private let records: UnsafeMutableRawBufferPointer
    private let capacity: Int
    /// Each slot: fingerprint (high 32 bits) and 1 + the index of the RPI's newest aggregate (low 32);
    /// 0 is empty.
    private let slots: UnsafeMutableBufferPointer<UInt64>
    private let shift: UInt64
    private let seed: (UInt64, UInt64)
    /// A blocked Bloom filter over the distinct RPIs: one 64-bit word per probe, two bits set per RPI.
    private let filter: UnsafeMutableBufferPointer<UInt64>
    private let filterShift: UInt64
    private(set) var count = 0
    private(set) var distinct = 0

    init(capacity: Int, seed: (UInt64, UInt64)) {
        // 32 bits per possible RPI (at least 64 Kibit): about 0.4 % false positives when every
        // aggregate has its own RPI, far fewer when RPIs repeat. 100,000 RPIs take 512 KiB, which
        // stays in a core's L2 cache.
        var filterWords = 1024
        while filterWords * 64 < capacity * 32 { filterWords <<= 1 }
        filter = .allocate(capacity: filterWords)
        filter.initialize(repeating: 0)
        filterShift = UInt64(64 - filterWords.trailingZeroBitCount)
        // At most three quarters full even if every aggregate had its own RPI; real logs hear each
        // RPI in several windows, so the table is usually far emptier.
        var slotCount = 16
        while slotCount < capacity + capacity / 3 { slotCount <<= 1 }
        self.capacity = capacity
        self.seed = (seed.0, seed.1 | 1)
        shift = UInt64(64 - slotCount.trailingZeroBitCount)
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: 0)
        records = .allocate(byteCount: max(1, capacity) * SegmentFormat.recordSize, alignment: 16)
    }

    deinit {
        slots.deallocate()
        records.deallocate()
        filter.deallocate()
    }

    var memoryBytes: Int { records.count + (slots.count + filter.count) * MemoryLayout<UInt64>.stride }

    var filterView: RPIFilter {
        RPIFilter(words: UnsafePointer(filter.baseAddress!), shift: filterShift, seed: seed)
    }

    @inline(__always)
    func mayContain(_ rpi: Bytes16) -> Bool {
        filterView.mayContain(RollingProximityIdentifier(rpi))
    }

    @inline(__always)
    private func filterProbe(_ rpi: Bytes16) -> (Int, UInt64) {
        RPIFilter.probe(RPIFilter.hash(rpi, seed: seed), shift: filterShift)
    }

    /// Copies an intact aggregate record in and links it to its RPI. Records beyond the capacity
    /// (a segment that grew since its size was read) wait for the next build.
    func insert(_ raw: UnsafeRawPointer, dayIndex: UInt8) {
        guard count < capacity else { return }
        let destination = records.baseAddress! + count * SegmentFormat.recordSize
        destination.copyMemory(from: raw, byteCount: SegmentFormat.recordSize)
        destination.storeBytes(of: dayIndex, toByteOffset: SegmentFormat.AggregateField.reserved, as: UInt8.self)
        let rpi = Bytes16(loadingFrom: destination + SegmentFormat.AggregateField.rpi)
        let slot = findSlot(rpi)
        let previous = slots[slot]
        if previous == 0 {
            distinct += 1
            let (word, bits) = filterProbe(rpi)
            filter[word] |= bits
        }
        // The checksum field becomes the link to the RPI's previous aggregate (0 = none).
        destination.storeBytes(of: UInt32(truncatingIfNeeded: previous), toByteOffset: SegmentFormat.AggregateField.checksum, as: UInt32.self)
        slots[slot] = UInt64(Self.fingerprint(rpi)) << 32 | UInt64(count + 1)
        count += 1
    }

    /// 1 + the index of the newest aggregate of `rpi`, or 0.
    @inline(__always)
    func head(of rpi: Bytes16) -> UInt32 {
        UInt32(truncatingIfNeeded: slots[findSlot(rpi)])
    }

    @inline(__always)
    func record(_ index: UInt32) -> UnsafeRawPointer {
        UnsafeRawPointer(records.baseAddress! + Int(index) * SegmentFormat.recordSize)
    }

    /// The slot holding `rpi`, or the empty slot where it would go (linear probing).
    @inline(__always)
    private func findSlot(_ rpi: Bytes16) -> Int {
        let fingerprint = UInt64(Self.fingerprint(rpi))
        var index = Int(truncatingIfNeeded: hash(rpi) >> shift)
        let mask = slots.count - 1
        while true {
            let value = slots[index]
            if value == 0 { return index }
            if value >> 32 == fingerprint {
                let head = Int(truncatingIfNeeded: value & 0xFFFF_FFFF) - 1
                if Bytes16(loadingFrom: records.baseAddress! + head * SegmentFormat.recordSize + SegmentFormat.AggregateField.rpi) == rpi { return index }
            }
            index = (index + 1) & mask
        }
    }

    @inline(__always)
    private func hash(_ rpi: Bytes16) -> UInt64 {
        RPIFilter.hash(rpi, seed: seed)
    }

    @inline(__always)
    private static func fingerprint(_ rpi: Bytes16) -> UInt32 {
        UInt32(truncatingIfNeeded: rpi.words.1 >> 32)
    }
}

/// The index's blocked Bloom filter as a plain value, so that code in other modules can inline the
/// probe into its innermost loop. Valid only while its `MatchingIndex` lives.
@frozen
package struct RPIFilter: @unchecked Sendable {
    // @unchecked: the words are written only while the index is built, read-only afterwards.
    @usableFromInline let words: UnsafePointer<UInt64>
    @usableFromInline let shift: UInt64
    @usableFromInline let seed: (UInt64, UInt64)

    init(words: UnsafePointer<UInt64>, shift: UInt64, seed: (UInt64, UInt64)) {
        self.words = words
        self.shift = shift
        self.seed = seed
    }

    /// No false negatives; about 0.4 % false positives.
    @inlinable @inline(__always)
    package func mayContain(_ rpi: RollingProximityIdentifier) -> Bool {
        let (word, bits) = Self.probe(Self.hash(rpi.bytes, seed: seed), shift: shift)
        return words[word] & bits == bits
    }

    /// Multiply-shift hashing of both words with a random per-index seed (seed.1 odd), so chosen
    /// RPIs cannot be made to collide; only the high bits are used, which depend on every input bit.
    @inlinable @inline(__always)
    static func hash(_ rpi: Bytes16, seed: (UInt64, UInt64)) -> UInt64 {
        ((rpi.words.0 ^ seed.0) &* 0x9E37_79B9_7F4A_7C15) ^ (rpi.words.1 &* seed.1)
    }

    /// The filter word of a hash and the two bits in it: the word from the top bits, the bits from
    /// the twelve below the top twenty-four (filters stay under 2^24 words).
    @inlinable @inline(__always)
    static func probe(_ hash: UInt64, shift: UInt64) -> (Int, UInt64) {
        // Masking shifts: the amounts are in range by construction, so no over-shift checks.
        let bits = (1 as UInt64) &<< (hash &>> 28) | (1 as UInt64) &<< (hash &>> 34)
        return (Int(truncatingIfNeeded: hash &>> shift), bits)
    }
}
