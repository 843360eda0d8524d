// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// A budget of requests: `tokens` per `interval` seconds, refilled continuously, with bursts of up
/// to `tokens` (the reference's RATE_LIMIT_TOKENS per RATE_LIMIT_INTERVAL, ENVS pkg/ratelimit/config.go).
package struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    package var tokens: Int
    package var interval: Int64

    package init(tokens: Int, interval: Int64) {
        self.tokens = tokens
        self.interval = interval
    }

    /// The tokens a limit may hold: one at least, and few enough that the arithmetic stays exact.
    package static let tokenRange = 1...1_000_000
    /// Seconds an interval may span: a second to a day.
    package static let intervalRange: ClosedRange<Int64> = 1...86_400

    package var description: String { "\(tokens) per \(interval) s" }
}

/// Token buckets keyed by client and scope, in memory and bounded: at most `maximumKeys` buckets
/// are kept; full ones are dropped first, and when every kept bucket is in use the newcomers share
/// one overflow bucket, so a flood from many addresses costs a bounded table and slows only other
/// newcomers, never the clients already tracked.
package final class RateLimiter: Sendable {
    /// What a take answered.
    package struct Decision: Sendable, Equatable {
        package var allowed: Bool
        /// Whole tokens left after this take.
        package var remaining: Int
        /// Seconds until a token is there again (0 when allowed).
        package var retryAfter: Int64
        /// Whether the key had a bucket of its own before this take (a client seen within the
        /// interval); a newcomer's, or one taken from the overflow bucket, is not.
        package var known: Bool

        package init(allowed: Bool, remaining: Int, retryAfter: Int64, known: Bool = true) {
            self.allowed = allowed
            self.remaining = remaining
            self.retryAfter = retryAfter
            self.known = known
        }

        /// Two decisions are the same answer whatever was known of the key before.
        package static func == (lhs: Decision, rhs: Decision) -> Bool {
            (lhs.allowed, lhs.remaining, lhs.retryAfter) == (rhs.allowed, rhs.remaining, rhs.retryAfter)
        }
    }

    private struct Bucket {
        /// Tokens, scaled by `interval` so that refills stay integral: one token is `interval` units.
        var units: Int64
        var updated: Int64
    }

    package let limit: RateLimit
    package let maximumKeys: Int
    static let overflowKey = "\u{0}overflow"
    private struct State {
        var buckets: [String: Bucket] = [:]
        /// When full buckets were last dropped: at most once a second, so that a flood of new
        /// addresses against a full table does not cost a scan of it each.
        var pruned = Int64.min
    }
    private let state = Mutex(State())

    package init(_ limit: RateLimit, maximumKeys: Int = 65_536) {
        precondition(
            RateLimit.tokenRange.contains(limit.tokens) && RateLimit.intervalRange.contains(limit.interval), "a rate limit is checked where it is read")
        self.limit = limit
        self.maximumKeys = max(1, maximumKeys)
    }

    var capacity: Int64 { Int64(limit.tokens) * limit.interval }

    /// Takes `count` tokens of `key`'s bucket at `now` (seconds, any monotonic origin), or none
    /// when it holds fewer.
    package func take(_ key: String, count: Int = 1, now: Int64) -> Decision {
        state.withLock { state in
            var key = key
            let known = state.buckets[key] != nil
            if !known, state.buckets.count >= maximumKeys {
                if now != state.pruned {
                    state.pruned = now
                    state.buckets = state.buckets.filter { refilled($0.value, now: now).units < capacity }
                }
                if state.buckets.count >= maximumKeys { key = Self.overflowKey }
            }
            var bucket = refilled(state.buckets[key] ?? Bucket(units: capacity, updated: now), now: now)
            let decision = decide(bucket, count: count)
            if decision.allowed { bucket.units -= Int64(count) * limit.interval }
            state.buckets[key] = bucket
            return Decision(allowed: decision.allowed, remaining: Int(bucket.units / limit.interval), retryAfter: decision.retryAfter, known: known)
        }
    }

    /// Returns a token `take` took, up to a full bucket (a reservation that was not needed). A key
    /// without a bucket took from the overflow bucket (a take never leaves its key's bucket full,
    /// so no prune dropped it): the token goes back there.
    package func giveBack(_ key: String, now: Int64) {
        state.withLock { state in
            let key = state.buckets[key] == nil ? Self.overflowKey : key
            guard var bucket = state.buckets[key] else { return }
            bucket = refilled(bucket, now: now)
            bucket.units = min(capacity, bucket.units + limit.interval)
            state.buckets[key] = bucket
        }
    }

    /// Whether `key` has `count` tokens now, without taking them.
    package func peek(_ key: String, count: Int = 1, now: Int64) -> Decision {
        state.withLock { state in decide(refilled(state.buckets[key] ?? Bucket(units: capacity, updated: now), now: now), count: count) }
    }

    /// Whether `bucket` holds `count` tokens, and if not how long until it does: units come back
    /// at `tokens` a second (one token is `interval` units, `tokens` of them every `interval` s).
    private func decide(_ bucket: Bucket, count: Int) -> Decision {
        let missing = max(0, Int64(count) * limit.interval - bucket.units)
        let wait = (missing + Int64(limit.tokens) - 1) / Int64(limit.tokens)
        return Decision(allowed: missing == 0, remaining: Int(bucket.units / limit.interval), retryAfter: missing == 0 ? 0 : max(1, wait))
    }

    /// Buckets kept now (for tests and figures).
    package var keys: Int { state.withLock { $0.buckets.count } }

    private func refilled(_ bucket: Bucket, now: Int64) -> Bucket {
        // A clock that stepped back refills nothing; a long pause refills at most to the top.
        let elapsed = max(0, now - bucket.updated)
        let refill = elapsed >= limit.interval ? capacity : elapsed * Int64(limit.tokens)
        return Bucket(units: min(capacity, bucket.units + refill), updated: max(now, bucket.updated))
    }
}
