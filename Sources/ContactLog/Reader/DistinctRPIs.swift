// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// How many distinct RPIs a span heard, in bounded memory: exact while the span has at most
/// `exactLimit` of them, a HyperLogLog estimate (16,384 registers, about 0.8 % standard error)
/// past that. The statistics and `GetHeard` count per hour, per day and in all for up to 14 days:
/// kept exactly, a crowded fortnight's sets took more than gaend's whole memory limit, since a
/// flood of distinct RPIs can fill every hour (docs/contact-log.md, "Counting distinct RPIs").
package struct DistinctRPIs: Sendable {
    /// Distinct RPIs counted exactly; a span with more is estimated. 1,024 RPIs take about 32 KiB
    /// in a set; the estimate's registers take 16 KiB.
    package static let exactLimit = 1024
    static let registerBits = 14

    private enum State: Sendable {
        case exact(Set<Bytes16>)
        case estimate([UInt8])
    }

    private var state = State.exact([])
    /// The hash's seed: fixed per counter set by its owner, so that chosen RPIs cannot aim at
    /// registers (the hash is SipHash, as `Hasher`).
    private let seed: Int

    package init(seed: Int) {
        self.seed = seed
    }

    package mutating func insert(_ rpi: Bytes16) {
        switch state {
        case .exact(var set):
            state = .exact([])
            set.insert(rpi)
            if set.count <= Self.exactLimit {
                state = .exact(set)
                return
            }
            var registers = [UInt8](repeating: 0, count: 1 << Self.registerBits)
            for member in set { Self.add(member, seed: seed, to: &registers) }
            state = .estimate(registers)
        case .estimate(var registers):
            state = .exact([])
            Self.add(rpi, seed: seed, to: &registers)
            state = .estimate(registers)
        }
    }

    /// The count: exact up to `exactLimit`, estimated past it.
    package var count: Int {
        switch state {
        case .exact(let set): return set.count
        case .estimate(let registers): return Self.estimate(registers)
        }
    }

    /// Whether `count` is exact.
    package var isExact: Bool {
        if case .exact = state { return true }
        return false
    }

    private static func add(_ rpi: Bytes16, seed: Int, to registers: inout [UInt8]) {
        var hasher = Hasher()
        hasher.combine(seed)
        hasher.combine(rpi.words.0)
        hasher.combine(rpi.words.1)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        let index = Int(hash >> UInt64(64 - registerBits))
        // The rank of the first set bit among the remaining 50 (51 when none is).
        let rest = hash << UInt64(registerBits)
        let rank = UInt8(min(rest.leadingZeroBitCount, 64 - registerBits) + 1)
        if rank > registers[index] { registers[index] = rank }
    }

    /// Flajolet et al.'s estimate with the small-range (linear counting) correction; a 64-bit hash
    /// needs no large-range one.
    private static func estimate(_ registers: [UInt8]) -> Int {
        let m = Double(registers.count)
        var sum = 0.0
        var zeros = 0
        for register in registers {
            sum += 1 / Double(UInt64(1) << UInt64(register))
            if register == 0 { zeros += 1 }
        }
        let alpha = 0.7213 / (1 + 1.079 / m)
        let raw = alpha * m * m / sum
        if raw <= 2.5 * m, zeros > 0 { return Int((m * naturalLog(m / Double(zeros))).rounded()) }
        return Int(raw.rounded())
    }

    /// The natural logarithm of a positive number without Foundation (ContactLog imports none):
    /// x = 2^e · f with f in [1, 2), ln f = 2 atanh((f − 1)/(f + 1)), whose series converges fast.
    package static func naturalLog(_ x: Double) -> Double {
        let f = x.significand
        let y = (f - 1) / (f + 1)
        var term = y
        var sum = 0.0
        var n = 1.0
        while abs(term) > 1e-17 {
            sum += term / n
            term *= y * y
            n += 2
        }
        return Double(x.exponent) * 0.693_147_180_559_945_3 + 2 * sum
    }
}
