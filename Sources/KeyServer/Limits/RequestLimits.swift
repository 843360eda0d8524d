// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// The rate limits of the endpoints that cost work or guard a secret: `/api/verify`,
/// `/api/certificate`, `/v1/publish` and `/admin/codes`.
///
/// As ENVS pkg/ratelimit/limitware/middleware.go: one budget per endpoint and client, and per API
/// key when the request holds a valid one (`APIKeyFunc` keys on the realm and the client address);
/// a refusal is 429 with Retry-After. Beside it, failed attempts (a wrong or expired code, a wrong
/// API key) have a budget of their own per client, far smaller: with it spent, the client gets 429
/// on the endpoints that take a secret until it refills, so 1,000 guesses cost hours, not seconds.
package final class RequestLimits: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Requests per endpoint and client (ENVS: RATE_LIMIT_TOKENS 120 per RATE_LIMIT_INTERVAL 1m).
        package var requests = RateLimit(tokens: 120, interval: 60)
        /// Failed attempts per client.
        package var failures = RateLimit(tokens: 30, interval: 3600)
        /// Clients tracked at most per budget (RateLimiter's bound on memory).
        package var maximumClients = 65_536
        package init() {}
    }

    /// The endpoints with a budget, each its own.
    package enum Scope: String, Sendable, CaseIterable {
        case verify = "/api/verify"
        case certificate = "/api/certificate"
        case publish = "/v1/publish"
        case adminCodes = "/admin/codes"

        /// Whether the endpoint takes a secret (a code or an API key) that failures guess at.
        var takesSecret: Bool { self != .publish }
    }

    package let settings: Settings
    let requests: RateLimiter
    let failures: RateLimiter

    package init(_ settings: Settings = Settings()) {
        self.settings = settings
        requests = RateLimiter(settings.requests, maximumKeys: settings.maximumClients)
        failures = RateLimiter(settings.failures, maximumKeys: settings.maximumClients)
    }

    /// The refusal for `request` if its client has spent its budget, else nil after taking a token.
    /// `apiKey` names the valid API key the request holds, if any (never the key itself).
    func admit(_ request: KeyServerAPI.Request, scope: Scope, apiKey: String?, now: Int64) -> KeyServerAPI.Response? {
        let client = request.client.isEmpty ? "unknown" : request.client
        if scope.takesSecret {
            let failed = failures.peek(client, now: now)
            if !failed.allowed { return Self.refusal(failed, limit: settings.failures, reason: "too many failed attempts from this client") }
        }
        let taken = requests.take("\(scope.rawValue) \(client) \(apiKey ?? "-")", now: now)
        guard taken.allowed else { return Self.refusal(taken, limit: settings.requests, reason: "too many requests to \(scope.rawValue) from this client") }
        return nil
    }

    /// Counts a failed attempt of `request`'s client.
    func recordFailure(of request: KeyServerAPI.Request, now: Int64) {
        _ = failures.take(request.client.isEmpty ? "unknown" : request.client, now: now)
    }

    static func refusal(_ decision: RateLimiter.Decision, limit: RateLimit, reason: String) -> KeyServerAPI.Response {
        var response = KeyServerAPI.Response.json(
            ["error": "\(reason); retry in \(decision.retryAfter) s", "errorCode": "rate_limited"], status: 429)
        response.headers = ["Retry-After": String(decision.retryAfter), "X-RateLimit-Limit": String(limit.tokens), "X-RateLimit-Remaining": "0"]
        return response
    }
}
