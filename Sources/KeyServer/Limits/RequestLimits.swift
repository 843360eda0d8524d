// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// The rate limits of the endpoints that cost work or guard a secret: `/api/verify`,
/// `/api/certificate`, `/v1/publish` and `/admin/codes`.
///
/// As ENVS pkg/ratelimit/limitware/middleware.go: one budget per endpoint and client, and per API
/// key when the request holds a valid one (`APIKeyFunc` keys on the realm and the client address);
/// a refusal is 429 with Retry-After. Beside it, failed attempts have budgets of their own per
/// client, far smaller, one per kind of secret: wrong codes, tokens and device keys spend the
/// public budget, wrong administrator keys the administrator's (kept by a `FailureBudget`: in
/// memory, or shared by replicas in PostgreSQL; requests per minute only guard capacity and stay
/// each replica's own). With one spent, the client gets
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
    let failures: any FailureBudget

    /// `failures` keeps the budgets of failed attempts: this process's memory unless given (a
    /// `SharedFailureBudget` for replicas on one PostgreSQL database).
    package init(_ settings: Settings = Settings(), failures: (any FailureBudget)? = nil) {
        self.settings = settings
        requests = RateLimiter(settings.requests, maximumKeys: settings.maximumClients)
        self.failures = failures ?? MemoryFailureBudget(settings.failures, maximumClients: settings.maximumClients)
    }

    /// What `admit` decided: a refusal to answer, or the go-ahead with the attempt it reserved
    /// from the client's budget of failures, if the endpoint takes a secret.
    enum Admission {
        case refused(KeyServerAPI.Response)
        case admitted(reserved: Secret?)
    }

    /// Takes a request token of `request`'s client, then reserves one failed attempt of the
    /// budget of `scope`'s secret; refuses when either is spent. `apiKey` names the valid API key
    /// the request holds, if any (never the key itself).
    func admit(_ request: KeyServerAPI.Request, scope: Scope, apiKey: String?, now: Int64) async -> Admission {
        let client = Self.client(request)
        let taken = requests.take("\(scope.rawValue) \(client) \(apiKey ?? "-")", now: now)
        guard taken.allowed else {
            return .refused(Self.refusal(taken, limit: settings.requests, reason: "too many requests to \(scope.rawValue) from this client"))
        }
        guard let secret = scope.secret else { return .admitted(reserved: nil) }
        do {
            let reserved = try await failures.reserve(client, secret: secret, now: now)
            guard reserved.allowed else {
                return .refused(Self.refusal(reserved, limit: settings.failures, reason: "too many failed attempts from this client"))
            }
        } catch {
            // Without the budget no secret is looked at: guessing must not go on while it is out.
            return .refused(.json(["error": "the budget of failed attempts cannot be read: \(error)", "errorCode": "internal_error"], status: 503))
        }
        return .admitted(reserved: secret)
    }

    /// Settles what `admit` reserved: a failed attempt keeps it spent, any other answer gives it back.
    func settle(_ reserved: Secret?, of request: KeyServerAPI.Request, failed: Bool, now: Int64) async {
        guard let reserved, !failed else { return }
        // A return that does not reach the database leaves the attempt spent: the safe side.
        try? await failures.giveBack(Self.client(request), secret: reserved, now: now)
    }

    static func client(_ request: KeyServerAPI.Request) -> String { request.client.isEmpty ? "unknown" : request.client }

    static func refusal(_ decision: RateLimiter.Decision, limit: RateLimit, reason: String) -> KeyServerAPI.Response {
        var response = KeyServerAPI.Response.json(
            ["error": "\(reason); retry in \(decision.retryAfter) s", "errorCode": "rate_limited"], status: 429)
        response.headers = ["Retry-After": String(decision.retryAfter), "X-RateLimit-Limit": String(limit.tokens), "X-RateLimit-Remaining": "0"]
        return response
    }
}
