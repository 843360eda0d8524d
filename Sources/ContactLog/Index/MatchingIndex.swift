// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
import Storage

/// The logged RPIs of a range of days, ready for matching: "was this RPI heard?" in one probe of a
/// compact hash table, and its aggregates when it was.
///
/// Built in one pass over the segments. The aggregates are kept as their own 48-byte records (the
/// checksum field, already verified, is reused as the link to the next aggregate of the same RPI,
/// and a reserved byte as the day), so the index holds no more than the records themselves plus
/// 8 bytes per table slot. The table is keyed with a random seed per build, so that a peer
/// broadcasting chosen RPIs cannot pile them into one probe chain. Immutable once built.
public final class MatchingIndex: @unchecked Sendable {
    // @unchecked: every stored property is written only in init and read-only afterwards.

    /// Aggregates indexed.
    public let aggregateCount: Int
    /// Distinct RPIs among them.
    public let distinctRPIs: Int
    /// The segments read, with their health.
    public let segments: [SegmentReport]
    /// The days the records came from; a record's day index points here.
    public let days: [UTCDay]

    private let table: RecordTable

    /// Builds the index of the days in `range` (every day if `nil`).
    public init(
        reader: ContactLogReader, days range: ClosedRange<UTCDay>? = nil,
        seed: (UInt64, UInt64) = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max) | 1)
    ) throws(ContactLogError) {
        let files = try reader.segmentFiles().filter { range?.contains($0.0) ?? true }
        precondition(files.count <= 255, "an index of \(files.count) days")
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
    public func contains(_ rpi: RollingProximityIdentifier) -> Bool {
        table.head(of: rpi.bytes) != 0
    }

    /// The aggregates of `rpi`, newest first.
    public func aggregates(of rpi: RollingProximityIdentifier) -> [ContactAggregate] {
        var result = [ContactAggregate]()
        var link = table.head(of: rpi.bytes)
        while link != 0 {
            let raw = table.record(link - 1)
            let day = days[Int(raw.load(fromByteOffset: 3, as: UInt8.self))]
            if case .aggregate(let aggregate)? = try? RecordCodec.decode(raw, day: day) {
                result.append(aggregate)
            }
            link = raw.loadUnaligned(fromByteOffset: 44, as: UInt32.self)
        }
        return result
    }

    /// Bytes the index holds: the records and the table.
    public var memoryBytes: Int { table.memoryBytes }
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
    private(set) var count = 0
    private(set) var distinct = 0

    init(capacity: Int, seed: (UInt64, UInt64)) {
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
    }

    var memoryBytes: Int { records.count + slots.count * MemoryLayout<UInt64>.stride }

    /// Copies an intact aggregate record in and links it to its RPI. Records beyond the capacity
    /// (a segment that grew since its size was read) wait for the next build.
    func insert(_ raw: UnsafeRawPointer, dayIndex: UInt8) {
        guard count < capacity else { return }
        let destination = records.baseAddress! + count * SegmentFormat.recordSize
        destination.copyMemory(from: raw, byteCount: SegmentFormat.recordSize)
        destination.storeBytes(of: dayIndex, toByteOffset: 3, as: UInt8.self)
        let rpi = Bytes16(loadingFrom: destination + 4)
        let slot = findSlot(rpi)
        let previous = slots[slot]
        if previous == 0 { distinct += 1 }
        // The checksum field becomes the link to the RPI's previous aggregate (0 = none).
        destination.storeBytes(of: UInt32(truncatingIfNeeded: previous), toByteOffset: 44, as: UInt32.self)
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
                if Bytes16(loadingFrom: records.baseAddress! + head * SegmentFormat.recordSize + 4) == rpi { return index }
            }
            index = (index + 1) & mask
        }
    }

    /// A keyed mix of both words; the top bits pick the slot.
    @inline(__always)
    private func hash(_ rpi: Bytes16) -> UInt64 {
        var x = (rpi.words.0 ^ seed.0) &* 0x9E37_79B9_7F4A_7C15
        x ^= (rpi.words.1 &* seed.1)
        x ^= x >> 29
        return x &* 0xBF58_476D_1CE4_E5B9
    }

    @inline(__always)
    private static func fingerprint(_ rpi: Bytes16) -> UInt32 {
        UInt32(truncatingIfNeeded: rpi.words.1 >> 32)
    }
}
