// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// The rate limits of the endpoints that cost work or guard a secret: `/api/verify`,
/// `/api/certificate`, `/v1/publish` and `/admin/codes`.
///
/// As ENVS pkg/ratelimit/limitware/middleware.go: one budget per endpoint and client, and per API
/// key when the request holds a valid one (`APIKeyFunc` keys on the realm and the client address);
/// a refusal is 429 with Retry-After. Beside it, failed attempts have budgets of their own per
/// client, far smaller, one per kind of secret: wrong codes, tokens and device keys spend the
/// public budget, wrong administrator keys the administrator's. With one spent, the client gets
/// 429 on the endpoints guarded by that kind of secret until it refills, so 1,000 guesses cost
/// hours, not seconds; and codes guessed from an address never refuse the health authority's
/// administrator there (ENVS keys its admin limits on the API key, not on codes).
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

        /// The kind of secret the endpoint takes, whose failures a guesser spends; nil for none.
        package var secret: Secret? {
            switch self {
            case .verify, .certificate: .public
            case .adminCodes: .administrator
            case .publish: nil
            }
        }
    }

    /// The kinds of secret failed attempts are counted by, each with a budget of its own.
    package enum Secret: String, Sendable, CaseIterable {
        /// Verification codes, tokens and the device API key: what phones and wearers send.
        case `public`
        /// The administrator's API key of /admin/codes.
        case administrator
    }

    package let settings: Settings
    let requests: RateLimiter
    let failures: [Secret: RateLimiter]

    package init(_ settings: Settings = Settings()) {
        self.settings = settings
        requests = RateLimiter(settings.requests, maximumKeys: settings.maximumClients)
        failures = Dictionary(uniqueKeysWithValues: Secret.allCases.map { ($0, RateLimiter(settings.failures, maximumKeys: settings.maximumClients)) })
    }

    /// The refusal for `request` if its client has spent its budget, else nil after taking a token.
    /// `apiKey` names the valid API key the request holds, if any (never the key itself).
    func admit(_ request: KeyServerAPI.Request, scope: Scope, apiKey: String?, now: Int64) -> KeyServerAPI.Response? {
        let client = Self.client(request)
        if let secret = scope.secret, let failed = failures[secret]?.peek(client, now: now), !failed.allowed {
            return Self.refusal(failed, limit: settings.failures, reason: "too many failed attempts from this client")
        }
        let taken = requests.take("\(scope.rawValue) \(client) \(apiKey ?? "-")", now: now)
        guard taken.allowed else { return Self.refusal(taken, limit: settings.requests, reason: "too many requests to \(scope.rawValue) from this client") }
        return nil
    }

    /// Counts a failed attempt of `request`'s client against the budget of `scope`'s secret.
    func recordFailure(of request: KeyServerAPI.Request, scope: Scope, now: Int64) {
        guard let secret = scope.secret else { return }
        _ = failures[secret]?.take(Self.client(request), now: now)
    }

    static func client(_ request: KeyServerAPI.Request) -> String { request.client.isEmpty ? "unknown" : request.client }

    static func refusal(_ decision: RateLimiter.Decision, limit: RateLimit, reason: String) -> KeyServerAPI.Response {
        var response = KeyServerAPI.Response.json(
            ["error": "\(reason); retry in \(decision.retryAfter) s", "errorCode": "rate_limited"], status: 429)
        response.headers = ["Retry-After": String(decision.retryAfter), "X-RateLimit-Limit": String(limit.tokens), "X-RateLimit-Remaining": "0"]
        return response
    }
}
