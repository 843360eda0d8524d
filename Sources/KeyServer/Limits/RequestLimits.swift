// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Synchronization
package import Logging

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
        /// Failed attempts per IPv6 /56 and /48 (issue 53: 2,000 /64s of one /48 made 59,970
        /// guesses in 49 s, each /64 within its own budget).
        package var failuresPer56 = RateLimit(tokens: 300, interval: 3600)
        package var failuresPer48 = RateLimit(tokens: 3000, interval: 3600)
        /// Failed attempts of all clients together per minute; when spent, clients not seen within
        /// their interval are refused until it refills (Let's Encrypt's limits work by network and
        /// account the same way).
        package var failuresServerWide = RateLimit(tokens: 600, interval: 60)
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
    let failures: FailureLevels
    let logger: Logger

    /// `failures` keeps the budgets of failed attempts: this process's memory unless given (a
    /// `SharedFailureBudget` for each level, for replicas on one PostgreSQL database).
    package init(_ settings: Settings = Settings(), failures: FailureLevels? = nil, logger: Logger = Logger(label: "gaen-keyserver.limits")) {
        self.settings = settings
        requests = RateLimiter(settings.requests, maximumKeys: settings.maximumClients)
        self.failures = failures ?? FailureLevels(settings)
        self.logger = logger
    }

    /// What `admit` reserved of the budgets of failures: the secret's kind and the level keys taken.
    struct Reservation {
        var secret: Secret
        var taken: [(level: FailureLevels.Level, key: String)]
    }

    /// What `admit` decided: a refusal to answer, or the go-ahead with the attempts it reserved
    /// from the budgets of failures, if the endpoint takes a secret.
    enum Admission {
        case refused(KeyServerAPI.Response)
        case admitted(reserved: Reservation?)
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
        // One attempt from each level: the client's, its IPv6 /56 and /48, then the server's.
        var reservation = Reservation(secret: secret, taken: [])
        do {
            var known = false
            for (level, key) in FailureLevels.keys(for: client) {
                let decision = try await failures.budget(level).reserve(key, secret: secret, now: now)
                if level == .client { known = decision.known }
                if decision.allowed {
                    reservation.taken.append((level, key))
                    continue
                }
                // The server's budget spent refuses newcomers only: a client seen within its own
                // interval keeps its own budget, already counted above.
                if level == .server, known { continue }
                await giveBack(reservation, client: client, now: now)
                if level == .server { warnServerWideSpent(now: now, secret: secret) }
                return .refused(Self.refusal(decision, limit: failures.limit(level), reason: level.refusal))
            }
        } catch {
            await giveBack(reservation, client: client, now: now)
            // Without the budget no secret is looked at: guessing must not go on while it is out.
            return .refused(.json(["error": "the budget of failed attempts cannot be read: \(error)", "errorCode": "internal_error"], status: 503))
        }
        return .admitted(reserved: reservation)
    }

    /// Settles what `admit` reserved: a failed attempt keeps it spent, any other answer gives it back.
    func settle(_ reserved: Reservation?, of request: KeyServerAPI.Request, failed: Bool, now: Int64) async {
        guard let reserved, !failed else { return }
        await giveBack(reserved, client: Self.client(request), now: now)
    }

    /// A return that does not reach the database leaves the attempt spent: the safe side.
    private func giveBack(_ reservation: Reservation, client: String, now: Int64) async {
        for (level, key) in reservation.taken { try? await failures.budget(level).giveBack(key, secret: reservation.secret, now: now) }
    }

    private let lastWarning = Mutex<Int64?>(nil)

    /// The journal hears of a spent server-wide budget once a minute, not once a refusal.
    private func warnServerWideSpent(now: Int64, secret: Secret) {
        let due = lastWarning.withLock { last -> Bool in
            if let last, now >= last, now - last < 60 { return false }
            last = now
            return true
        }
        guard due else { return }
        logger.warning(
            "the server-wide budget of failed attempts is spent: new clients are refused until it refills",
            metadata: ["secret": "\(secret.rawValue)", "limit": "\(failures.limit(.server))"])
    }

    static func client(_ request: KeyServerAPI.Request) -> String { request.client.isEmpty ? "unknown" : request.client }

    static func refusal(_ decision: RateLimiter.Decision, limit: RateLimit, reason: String) -> KeyServerAPI.Response {
        var response = KeyServerAPI.Response.json(
            ["error": "\(reason); retry in \(decision.retryAfter) s", "errorCode": "rate_limited"], status: 429)
        response.headers = ["Retry-After": String(decision.retryAfter), "X-RateLimit-Limit": String(limit.tokens), "X-RateLimit-Remaining": "0"]
        return response
    }
}

/// The budgets of failed attempts at each level a request is counted at (issue 53): its client
/// (an IPv4 address, an IPv6 /64), the client's IPv6 /56 and /48, and the whole server. Each level
/// is a `FailureBudget` of its own, in memory or shared by replicas.
package struct FailureLevels: Sendable {
    package enum Level: String, Sendable, CaseIterable {
        case client, network56, network48, server

        var refusal: String {
            switch self {
            case .client: "too many failed attempts from this client"
            case .network56: "too many failed attempts from this client's /56"
            case .network48: "too many failed attempts from this client's /48"
            case .server: "too many failed attempts server-wide: new clients are refused for now"
            }
        }

        /// The table a shared budget of this level keeps its rows in.
        package var table: String {
            switch self {
            case .client: "failure_budget"
            case .network56: "failure_budget_56"
            case .network48: "failure_budget_48"
            case .server: "failure_budget_server"
            }
        }
    }

    let budgets: [Level: any FailureBudget]
    let limits: [Level: RateLimit]

    /// Each level's budget in this process's memory.
    package init(_ settings: RequestLimits.Settings) {
        let limits = Self.limits(settings)
        self.limits = limits
        budgets = limits.mapValues { MemoryFailureBudget($0, maximumClients: settings.maximumClients) }
    }

    /// Each level's budget as `make` opens it (a `SharedFailureBudget` on a table of its own).
    package init<Failure: Error>(_ settings: RequestLimits.Settings, make: (Level, RateLimit) throws(Failure) -> any FailureBudget) throws(Failure) {
        let limits = Self.limits(settings)
        self.limits = limits
        var budgets = [Level: any FailureBudget]()
        for level in Level.allCases { budgets[level] = try make(level, limits[level]!) }
        self.budgets = budgets
    }

    static func limits(_ settings: RequestLimits.Settings) -> [Level: RateLimit] {
        [.client: settings.failures, .network56: settings.failuresPer56, .network48: settings.failuresPer48, .server: settings.failuresServerWide]
    }

    func budget(_ level: Level) -> any FailureBudget { budgets[level]! }
    func limit(_ level: Level) -> RateLimit { limits[level]! }

    /// The keys `client` is counted under, level by level: an IPv6 client's /64 (as the request
    /// names it) also under its /56 and /48; every client under the server's one key.
    package static func keys(for client: String) -> [(Level, String)] {
        var keys: [(Level, String)] = [(.client, client)]
        if client.hasSuffix("/64"), let address = IPAddress(client.dropLast(3)), !address.isIPv4 {
            for (level, bits) in [(Level.network56, 7), (.network48, 6)] {
                keys.append((level, IPAddress(bytes: Array(address.bytes.prefix(bits)) + Array(repeating: 0, count: 16 - bits)).description + "/\(bits * 8)"))
            }
        }
        keys.append((.server, "*"))
        return keys
    }
}
