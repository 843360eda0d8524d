// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Foundation

/// The HTTP API as plain request → response functions, so that any HTTP server can carry it and
/// tests need none: the key server's `POST /v1/publish`, the verification server's `/api/verify`
/// and `/api/certificate`, an administrator's `POST /admin/codes`, and the exports and exposure
/// configuration as static files.
package struct KeyServerAPI: Sendable {
    package struct Request: Sendable {
        package var method: String
        /// The path without the query.
        package var path: String
        /// Lowercased names.
        package var headers: [String: String]
        package var body: [UInt8]
        /// Who sent it, as rate limits count clients: an IPv4 address, an IPv6 /64 prefix; empty
        /// when unknown (all such requests then share one budget).
        package var client: String

        package init(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], client: String = "") {
            self.method = method
            self.path = path
            self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            self.body = body
            self.client = client
        }
    }

    package struct Response: Sendable, Equatable {
        package var status: Int
        package var contentType: String
        package var body: [UInt8]
        /// Headers beside Content-Type and Content-Length (Retry-After on a 429).
        package var headers: [String: String] = [:]
        /// A wrong code or API key: counted against the client's budget of failures.
        var failedAttempt = false

        package init(status: Int, contentType: String, body: [UInt8], headers: [String: String] = [:]) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.headers = headers
        }

        static func json(_ object: [String: Any], status: Int = 200) -> Response {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return Response(status: status, contentType: "application/json", body: Array(data))
        }
    }

    package struct Settings: Sendable {
        /// Health authority IDs whose publishes are accepted.
        package var healthAuthorities: Set<String>
        /// The device API key `/api/verify` and `/api/certificate` require (X-API-Key).
        package var deviceAPIKey: String
        /// The administrator's key for `/admin/codes` (X-API-Key); nil disables the endpoint.
        package var adminAPIKey: String?
        /// Served under /exports/ when the API is given no `ExportFiles` (a directory alone).
        package var exportDirectory: String
        /// Served as /configuration.json.
        package var exposureConfigurationPath: String?

        package init(healthAuthorities: Set<String>, deviceAPIKey: String, exportDirectory: String) {
            self.healthAuthorities = healthAuthorities
            self.deviceAPIKey = deviceAPIKey
            self.exportDirectory = exportDirectory
        }
    }

    let store: KeyStore
    let verifier: Verifier
    let check: CertificateCheck
    let validator: PublishValidator
    let settings: Settings
    let limits: RequestLimits
    let exports: ExportFiles
    let clock: @Sendable () -> UnixTime

    /// `exports` serves `/exports/`: the database's batches (every replica the same); without it,
    /// `settings.exportDirectory` as a static server would.
    package init(
        store: KeyStore, verifier: Verifier, check: CertificateCheck, validator: PublishValidator = PublishValidator(), settings: Settings,
        limits: RequestLimits = RequestLimits(), exports: ExportFiles? = nil, clock: @escaping @Sendable () -> UnixTime
    ) {
        self.limits = limits
        self.exports = exports ?? ExportFiles(directory: settings.exportDirectory)
        self.store = store
        self.verifier = verifier
        self.check = check
        self.validator = validator
        self.settings = settings
        self.clock = clock
    }

    package func handle(_ request: Request) async -> Response {
        guard request.body.count <= PublishRequest.maximumBodyBytes else {
            return .json(["error": "the body is larger than 64,000 bytes", "code": "bad_request", "errorCode": "unparsable_request"], status: 413)
        }
        guard request.method == "POST", let scope = RequestLimits.Scope(rawValue: request.path) else { return await route(request) }
        // What phones send is JSON: anything else is refused before it is read, as ENS and ENVS
        // answer (415 unless application/json; a charset may follow).
        if scope != .adminCodes, !Self.isJSON(request.headers["content-type"]) {
            return .json(["error": "Content-Type must be application/json", "code": "bad_request", "errorCode": "unparsable_request"], status: 415)
        }
        let now = clock().seconds
        switch await limits.admit(request, scope: scope, apiKey: validAPIKey(request, scope: scope), now: now) {
        case .refused(let refusal):
            return refusal
        case .admitted(let reserved):
            let response = await route(request)
            await limits.settle(reserved, of: request, failed: response.failedAttempt, now: now)
            return response
        }
    }

    /// Whether a Content-Type names JSON: `application/json`, any case, parameters allowed.
    package static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        return contentType.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    /// Which API key a request holds, by role, if it is the right one for the endpoint.
    func validAPIKey(_ request: Request, scope: RequestLimits.Scope) -> String? {
        switch scope {
        case .verify, .certificate: SecretComparison.matches(request.headers["x-api-key"], settings.deviceAPIKey) ? "device" : nil
        case .adminCodes: settings.adminAPIKey.flatMap { SecretComparison.matches(request.headers["x-api-key"], $0) ? "admin" : nil }
        case .publish: nil
        }
    }

    func route(_ request: Request) async -> Response {
        switch (request.method, request.path) {
        case ("POST", "/v1/publish"): return await publish(request)
        case ("POST", "/api/verify"): return await verify(request)
        case ("POST", "/api/certificate"): return await certificate(request)
        case ("POST", "/admin/codes"): return await issueCode(request)
        case ("GET", "/configuration.json"):
            guard let path = settings.exposureConfigurationPath, let data = FileManager.default.contents(atPath: path) else {
                return .json(["error": "no exposure configuration is configured"], status: 404)
            }
            return Response(status: 200, contentType: "application/json", body: Array(data))
        case ("GET", let path) where path.hasPrefix("/exports/"), ("HEAD", let path) where path.hasPrefix("/exports/"):
            return await exported(String(path.dropFirst("/exports/".count)), request)
        case (_, "/v1/publish"), (_, "/api/verify"), (_, "/api/certificate"), (_, "/admin/codes"):
            return .json(["error": "method \(request.method) not allowed"], status: 405)
        default:
            return .json(["error": "not found"], status: 404)
        }
    }

    /// Random padding, so that response sizes do not tell a real request from chaff.
    static func padding() -> String {
        Data((0..<Int.random(in: 512...1024)).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    func publish(_ request: Request) async -> Response {
        func failure(_ error: PublishError) -> Response {
            .json(["error": error.message, "code": error.code.rawValue, "padding": Self.padding()], status: error.status)
        }
        if request.headers["x-chaff"] != nil { return .json(["padding": Self.padding()]) }
        do {
            let publish = try PublishRequest(json: request.body)
            guard settings.healthAuthorities.contains(publish.healthAuthorityID) else {
                throw PublishError(.unknownHealthAuthorityID, "'\(publish.healthAuthorityID)' is not a health authority this server knows")
            }
            let now = clock()
            let claims = try check.check(publish, now: now.seconds)
            let outcome = try validator.validate(publish, reportType: claims.reportType, certificateOnset: claims.symptomOnsetInterval, now: now)
            // Every key too far from the symptom onset: nothing to store and no key to revise
            // later, so no revision token (ENS publish.go makes none without keys), but no error.
            if outcome.accepted.isEmpty {
                return .json(["revisionToken": "", "insertedExposures": 0, "warnings": outcome.warnings, "padding": Self.padding()])
            }
            let stored = try await store.publish(
                outcome.accepted, reportType: claims.reportType, healthAuthority: publish.healthAuthorityID, traveler: publish.traveler,
                revisionToken: publish.revisionToken, now: now)
            // New keys only, as the reference's response (revisions are not counted).
            var body: [String: Any] = ["revisionToken": stored.revisionToken, "insertedExposures": stored.inserted, "padding": Self.padding()]
            if !outcome.warnings.isEmpty { body["warnings"] = outcome.warnings }
            // Only bad keys make a partial failure; a key too far from the symptom onset is a warning.
            if outcome.partialFailure {
                body["code"] = "partial_failure"
                body["error"] = "some keys were not accepted"
            }
            return .json(body)
        } catch let error as PublishError {
            return failure(error)
        } catch {
            return failure(PublishError(.internalError, "\(error)"))
        }
    }

    func object(_ body: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// Refusals that mean a guessed secret was wrong: they count against the client's failures.
    static let failedAttemptCodes: Set<String> = ["code_invalid", "code_not_found", "code_expired", "token_invalid"]

    func refusal(_ refusal: Verifier.Refusal) -> Response {
        var response = Response.json(["error": refusal.message, "errorCode": refusal.code, "padding": Self.padding()], status: refusal.status)
        response.failedAttempt = Self.failedAttemptCodes.contains(refusal.code)
        return response
    }

    static func unauthorized(_ message: String) -> Response {
        var response = Response.json(["error": message, "errorCode": "unauthorized"], status: 401)
        response.failedAttempt = true
        return response
    }

    func authorizedDevice(_ request: Request) -> Response? {
        guard SecretComparison.matches(request.headers["x-api-key"], settings.deviceAPIKey) else { return Self.unauthorized("missing or wrong X-API-Key") }
        return nil
    }

    func verify(_ request: Request) async -> Response {
        if let refused = authorizedDevice(request) { return refused }
        if request.headers["x-chaff"] != nil { return .json(["padding": Self.padding()]) }
        guard let object = object(request.body), let code = object["code"] as? String else {
            return refusal(Verifier.Refusal("unparsable_request", "the body is not {\"code\": ...}"))
        }
        let accept: Set<String>
        do {
            accept = try Verifier.acceptedTestTypes(object["accept"])
        } catch {
            return refusal(error)
        }
        do {
            let verified = try await verifier.verify(code: code, accept: accept, now: clock())
            var body: [String: Any] = ["testtype": verified.testType, "token": verified.token, "padding": Self.padding()]
            if let symptomDate = verified.symptomDate { body["symptomDate"] = symptomDate }
            if let testDate = verified.testDate { body["testDate"] = testDate }
            return .json(body)
        } catch let refused as Verifier.Refusal {
            return refusal(refused)
        } catch {
            return refusal(Verifier.Refusal("internal_error", "\(error)", status: 500))
        }
    }

    func certificate(_ request: Request) async -> Response {
        if let refused = authorizedDevice(request) { return refused }
        if request.headers["x-chaff"] != nil { return .json(["padding": Self.padding()]) }
        guard let object = object(request.body), let token = object["token"] as? String, let hmac = object["ekeyhmac"] as? String else {
            return refusal(Verifier.Refusal("unparsable_request", "the body is not {\"token\": ..., \"ekeyhmac\": ...}"))
        }
        do {
            return .json(["certificate": try await verifier.certificate(token: token, keysHMAC: hmac, now: clock()), "padding": Self.padding()])
        } catch let refused as Verifier.Refusal {
            return refusal(refused)
        } catch {
            return refusal(Verifier.Refusal("internal_error", "\(error)", status: 500))
        }
    }

    func issueCode(_ request: Request) async -> Response {
        guard let adminKey = settings.adminAPIKey, SecretComparison.matches(request.headers["x-api-key"], adminKey) else {
            return Self.unauthorized("missing or wrong administrator X-API-Key")
        }
        guard let object = object(request.body), let type = object["testType"] as? String else {
            return refusal(Verifier.Refusal("unparsable_request", "the body is not {\"testType\": ...}"))
        }
        let symptom = (object["symptomDate"] as? String).flatMap(UTCDay.init(parsing:))
        let test = (object["testDate"] as? String).flatMap(UTCDay.init(parsing:))
        do {
            return .json(try await verifier.issueCode(testType: type, symptomDate: symptom, testDate: test, now: clock()).responseFields)
        } catch let refused as Verifier.Refusal {
            return refusal(refused)
        } catch {
            return refusal(Verifier.Refusal("internal_error", "\(error)", status: 500))
        }
    }

    /// How long a cache may keep the index: a new batch shows within a minute. Files never change.
    static let indexCacheControl = "public, max-age=60"
    static let fileCacheControl = "public, max-age=31536000, immutable"

    /// An export's index or file, with a strong `ETag` and `Cache-Control` so that a CDN or proxy
    /// in front can keep it; a conditional GET whose `If-None-Match` holds the tag is answered 304
    /// without the bytes (RFC 9110 §13.1.2). Nothing outside the exports, no hidden files.
    func exported(_ relative: String, _ request: Request) async -> Response {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && $0.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } })
        else { return .json(["error": "not found"], status: 404) }
        let isIndex = exports.isIndex(relative)
        let found: ExportFiles.File?
        do {
            found = isIndex ? try await exports.index() : try await exports.file(relative)
        } catch {
            return .json(["error": "the exports cannot be read: \(error)"], status: 503)
        }
        guard let found else { return .json(["error": "not found"], status: 404) }
        let headers = ["ETag": found.entityTag, "Cache-Control": isIndex || relative.hasSuffix(".txt") ? Self.indexCacheControl : Self.fileCacheControl]
        let type = relative.hasSuffix(".txt") ? "text/plain; charset=us-ascii" : "application/zip"
        if let tags = request.headers["if-none-match"], Self.matches(tags, found.entityTag) {
            return Response(status: 304, contentType: type, body: [], headers: headers)
        }
        return Response(status: 200, contentType: type, body: found.bytes, headers: headers)
    }

    /// If-None-Match's weak comparison: `*`, or any listed tag equal to `tag` with `W/` ignored.
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { listed in
            let trimmed = listed.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || (trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed) == tag
        }
    }
}
