// SPDX-License-Identifier: GPL-3.0-or-later

/// The budgets of failed attempts, per client and kind of secret: where they are kept decides
/// whether replicas share them. One attempt is reserved before the secret is looked at and given
/// back when it was right, so that concurrent guesses (on one replica or several) can never spend
/// more than the budget: the 31st wrong guess of an hour is refused however the 30 before it
/// were spread.
package protocol FailureBudget: Sendable {
    /// Takes one attempt from `client`'s budget for `secret` at `now` (Unix seconds), or refuses
    /// with the wait until one is there.
    func reserve(_ client: String, secret: RequestLimits.Secret, now: Int64) async throws -> RateLimiter.Decision

    /// Gives back an attempt `reserve` took for a request that did not fail.
    func giveBack(_ client: String, secret: RequestLimits.Secret, now: Int64) async throws
}

/// The budgets in this process's memory: one replica's own (SQLite), bounded as `RateLimiter` is.
package struct MemoryFailureBudget: FailureBudget {
    let limiters: [RequestLimits.Secret: RateLimiter]

    package init(_ limit: RateLimit, maximumClients: Int) {
        limiters = Dictionary(uniqueKeysWithValues: RequestLimits.Secret.allCases.map { ($0, RateLimiter(limit, maximumKeys: maximumClients)) })
    }

    package func reserve(_ client: String, secret: RequestLimits.Secret, now: Int64) -> RateLimiter.Decision {
        limiters[secret]!.take(client, now: now)
    }

    package func giveBack(_ client: String, secret: RequestLimits.Secret, now: Int64) {
        limiters[secret]!.giveBack(client, now: now)
    }
}
