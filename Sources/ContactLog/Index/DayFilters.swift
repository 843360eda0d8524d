// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// One blocked Bloom filter per indexed day, of the fingerprints of the RPIs first heard that day.
///
/// A key's RPI for interval j can only match a sighting first heard in j − 12 … j + 12, so it is
/// asked of the filter of that day only (of two days in the 24 intervals around midnight). Each
/// day's filter is sized by that day's distinct RPIs, so the probes of a key stay in a filter of a
/// fourteenth of the log's: in the core's first-level cache for a quiet fortnight, in its
/// second-level one for a crowded one, where one filter of the whole log would not be
/// (docs/contact-log.md, "Matching in bounded memory").
///
/// Immutable once built; read from several tasks at once.
package final class DayFilters: @unchecked Sendable {
    // @unchecked: the words and slots are written only while the index is built.

    /// A day's words and the shift that leaves a hash's word number (its top bits; the words are
    /// a power of two).
    struct Slot {
        let words: UnsafePointer<UInt64>
        let shift: UInt64
    }

    /// The first day's number (days since the epoch).
    private let firstDay: Int64
    /// One slot per day from the first day to the last, then one empty slot (two zero words) for
    /// every interval outside them and for days without a segment.
    private let slots: UnsafeMutableBufferPointer<Slot>
    private let allocations: [UnsafeMutableBufferPointer<UInt64>]
    package let seed: (UInt64, UInt64)
    /// `BitPairs.table`, held here so that the probe loop reads it without a global's check.
    private let pairs: UnsafeMutableBufferPointer<UInt64>
    /// Bytes the filters hold.
    package let memoryBytes: Int

    /// Words of a day's filter: 32 bits an RPI (about 0.4 % false positives), a power of two, at
    /// least 16 words and at most 2^20 (a fingerprint's top 20 bits choose the word).
    static func wordCount(holding count: Int) -> Int {
        var words = 16
        while words * 64 < count * 32 && words < 1 << 20 { words <<= 1 }
        return words
    }

    static func bytes(holding count: Int) -> Int { wordCount(holding: count) * 8 }

    /// Collects the days' filters while the index is built, oldest day first.
    struct Builder {
        private var days: [(day: Int64, words: UnsafeMutableBufferPointer<UInt64>)] = []
        private(set) var memoryBytes = 16

        /// Adds `day`'s filter of `distinct` fingerprints, which `fingerprints` lists (a
        /// fingerprint may come more than once).
        mutating func add(day: UTCDay, distinct: Int, fingerprints: ((UInt32) -> Void) -> Void) {
            let words = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: DayFilters.wordCount(holding: distinct))
            words.initialize(repeating: 0)
            let shift = DayFilters.shift(words: words.count)
            let pairs = BitPairs.table
            fingerprints { fingerprint in
                let hash = UInt64(fingerprint) << 32
                words[Int(truncatingIfNeeded: hash &>> shift)] |= pairs[Int(fingerprint & 0xFF)]
            }
            days.append((day.daysSinceEpoch, words))
            memoryBytes += words.count * 8
        }

        func build(seed: (UInt64, UInt64)) -> DayFilters { DayFilters(days: days, memoryBytes: memoryBytes, seed: seed) }
    }

    private init(days: [(day: Int64, words: UnsafeMutableBufferPointer<UInt64>)], memoryBytes: Int, seed: (UInt64, UInt64)) {
        let empty = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 2)
        empty.initialize(repeating: 0)
        let firstDay = days.first?.day ?? 0
        self.firstDay = firstDay
        let span = days.last.map { Int($0.day - firstDay) + 1 } ?? 0
        slots = .allocate(capacity: span + 1)
        slots.initialize(repeating: Slot(words: UnsafePointer(empty.baseAddress!), shift: Self.shift(words: 2)))
        for (day, words) in days {
            slots[Int(day - firstDay)] = Slot(words: UnsafePointer(words.baseAddress!), shift: Self.shift(words: words.count))
        }
        allocations = days.map(\.words) + [empty]
        pairs = .allocate(capacity: 256)
        _ = pairs.initialize(from: BitPairs.table)
        self.memoryBytes = memoryBytes
        self.seed = seed
    }

    deinit {
        for words in allocations { words.deallocate() }
        pairs.deallocate()
        slots.deallocate()
    }

    /// The shift that leaves the top log2(words) bits of a 64-bit hash.
    private static func shift(words: Int) -> UInt64 { UInt64(64 - words.trailingZeroBitCount) }

    /// The slot of the day holding `interval` (the empty slot outside the indexed days).
    @inline(__always)
    private func slot(of interval: Int64) -> Int {
        let day = (interval >= 0 ? interval / 144 : (interval - 143) / 144) - firstDay
        return day >= 0 && day < Int64(slots.count - 1) ? Int(day) : slots.count - 1
    }

    /// Whether `rpi` may have been heard on any indexed day.
    package func mayContain(_ rpi: RollingProximityIdentifier) -> Bool {
        let hash = Self.hash(rpi.bytes, seed: seed)
        return slots.contains { passes(hash, $0) }
    }

    /// The positions among `rpis[0 ..< count]`, the RPIs of intervals `firstInterval` onwards,
    /// that may have been heard within ±12 intervals of their own, in order, written to `positions`
    /// (room for `count`); returns how many. No false negatives; about 0.4 % false positives a
    /// probe. One call a key, the loop compiled here where every step inlines: a probe is a
    /// multiply, two shifts and two loads from the first-level cache, and a branch that is almost
    /// never taken.
    package func candidates(
        _ rpis: UnsafePointer<RollingProximityIdentifier>, firstInterval: Int64, count: Int, into positions: UnsafeMutablePointer<Int32>
    ) -> Int {
        var found = 0
        var position = 0
        while position < count {
            // A run of positions whose ±12 intervals stay in the same one or two days: 12 …
            // 131 of a day need one filter, 132 … 11 of the next need two.
            let interval = firstInterval + Int64(position)
            let phase = Int(interval - (interval >= 0 ? interval / 144 : (interval - 143) / 144) * 144)
            let end = min(count, position + (phase < 12 ? 12 - phase : phase < 132 ? 132 - phase : 156 - phase))
            let earlier = slots[slot(of: interval - 12)]
            let later = slots[slot(of: interval + 12)]
            if earlier.words == later.words {
                // Two probes a turn: the loop's own count and branch are a quarter of a probe's
                // instructions.
                while position &+ 1 < end {
                    let first = passes(Self.hash(rpis[position].bytes, seed: seed), earlier)
                    let second = passes(Self.hash(rpis[position &+ 1].bytes, seed: seed), earlier)
                    if first || second {
                        if first {
                            positions[found] = Int32(truncatingIfNeeded: position)
                            found &+= 1
                        }
                        if second {
                            positions[found] = Int32(truncatingIfNeeded: position &+ 1)
                            found &+= 1
                        }
                    }
                    position &+= 2
                }
                while position < end {
                    if passes(Self.hash(rpis[position].bytes, seed: seed), earlier) {
                        positions[found] = Int32(truncatingIfNeeded: position)
                        found &+= 1
                    }
                    position &+= 1
                }
            } else {
                while position < end {
                    let hash = Self.hash(rpis[position].bytes, seed: seed)
                    if passes(hash, earlier) || passes(hash, later) {
                        positions[found] = Int32(truncatingIfNeeded: position)
                        found &+= 1
                    }
                    position &+= 1
                }
            }
        }
        return found
    }

    /// The RPI's fingerprint (the top 32 bits of `hash`), which the index's table keys by.
    @inline(__always)
    static func fingerprint(_ rpi: Bytes16, seed: (UInt64, UInt64)) -> UInt32 {
        UInt32(truncatingIfNeeded: hash(rpi, seed: seed) &>> 32)
    }

    /// Multiply-shift hashing of the RPI's two words folded into one, with a random per-index seed
    /// (seed.1 odd); only the top 32 bits are used, which depend on every input bit. One multiply
    /// is enough: an RPI is an AES output, so two of a log's fold alike with odds of 2^-64, and
    /// RPIs a peer chose to fold alike share one table slot and one chain, which costs a probe
    /// nothing (a key's RPI reaches that chain with odds of 2^-32); they count as one distinct RPI.
    /// Without the seed, a peer could choose RPIs whose fingerprints crowd one stretch of the table
    /// or fill whole filter words.
    @inline(__always)
    static func hash(_ rpi: Bytes16, seed: (UInt64, UInt64)) -> UInt64 {
        (rpi.words.0 ^ rpi.words.1 ^ seed.0) &* seed.1
    }

    /// A hash passes a day's filter if both bits of its pair (chosen by the fingerprint's low
    /// eight bits) are set in its word (chosen by the hash's top bits).
    @inline(__always)
    private func passes(_ hash: UInt64, _ slot: Slot) -> Bool {
        let bits = pairs[Int(truncatingIfNeeded: (hash &>> 32) & 0xFF)]
        return slot.words[Int(truncatingIfNeeded: hash &>> slot.shift)] & bits == bits
    }
}

/// The two bits a fingerprint sets in its word, looked up by its low eight bits: 256 distinct
/// pairs in which every bit of the word is used equally often. A lookup in a table that stays in
/// the first-level cache costs the probe loop fewer instructions than two variable shifts.
enum BitPairs {
    static let table: [UInt64] = (0..<256).map { index in
        let first = index & 63
        let second = (first + [1, 17, 29, 43][index >> 6]) & 63
        return (1 as UInt64) << first | (1 as UInt64) << second
    }
}
