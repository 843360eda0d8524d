// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
public import ENCrypto
import Foundation

/// The verification server's side (google/exposure-notifications-verification-server docs/api.md):
/// codes issued by an administrator, `/api/verify` turning a code into a token once, and
/// `/api/certificate` turning the token and the keys' HMAC into a certificate the key server checks.
public actor Verifier {
    /// A refusal with the reference error code.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public var code: String
        public var message: String
        public var status: Int
        public var description: String { "\(code): \(message)" }
        public init(_ code: String, _ message: String, status: Int = 400) {
            self.code = code
            self.message = message
            self.status = status
        }
    }

    public struct Settings: Sendable {
        public var issuer = "gaen-keyserver-verification"
        public var audience = "gaen-keyserver"
        public var keyID = "v1"
        public var codeLifetime: Int64 = 24 * 3600
        public var tokenLifetime: Int64 = 24 * 3600
        public var certificateLifetime: Int64 = 15 * 60
        public init() {}
    }

    public static let testTypes = ["confirmed", "likely", "negative", "user-report"]

    /// The test types a device's `accept` lets through, as the reference's GetAcceptedTestTypes
    /// (exposure-notifications-verification-server pkg/api/util.go): none or an empty list means
    /// all; the types form a hierarchy (likely includes confirmed, negative includes likely), and
    /// user-report adds itself and confirmed. Anything else is `invalid_test_type`.
    public static func acceptedTestTypes(_ accept: Any?) throws(Refusal) -> Set<String> {
        guard let accept, !(accept is NSNull) else { return Set(testTypes) }
        guard let list = accept as? [Any], let names = list as? [String] else {
            throw Refusal("invalid_test_type", "accept is not a list of test types")
        }
        if names.isEmpty { return Set(testTypes) }
        var accepted = Set<String>()
        for name in names {
            switch name.lowercased() {
            case "confirmed": accepted.formUnion(["confirmed"])
            case "likely": accepted.formUnion(["confirmed", "likely"])
            case "negative": accepted.formUnion(["confirmed", "likely", "negative"])
            case "user-report": accepted.formUnion(["confirmed", "user-report"])
            default: throw Refusal("invalid_test_type", "invalid accepted test type: \(name)")
            }
        }
        return accepted
    }

    let database: any Database
    let signingKey: ECDSAPrivateKey
    public nonisolated let settings: Settings
    /// Every statement blocks: the verifier runs on a thread of its own, as `KeyStore` does.
    private let thread = DatabaseThread(name: "verifier")

    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    deinit { thread.stop() }

    /// Opens the verification tables at `location` (beside the keys' in a PostgreSQL database),
    /// creating them if needed.
    public init(_ location: DatabaseLocation, signingKey: ECDSAPrivateKey, settings: Settings = Settings()) throws(DatabaseError) {
        database = try location.open()
        self.signingKey = signingKey
        self.settings = settings
        let integer = database.engine.types.integer
        try database.createSchema(
            """
            CREATE TABLE IF NOT EXISTS verification_code (
                code TEXT PRIMARY KEY,
                test_type TEXT NOT NULL,
                symptom_date TEXT,
                test_date TEXT,
                created \(integer) NOT NULL,
                expires \(integer) NOT NULL,
                claimed \(integer)
            );
            CREATE TABLE IF NOT EXISTS verification_token (
                id TEXT PRIMARY KEY,
                test_type TEXT NOT NULL,
                symptom_date TEXT,
                expires \(integer) NOT NULL,
                used \(integer)
            );
            """)
    }

    /// Opens the verification tables in the SQLite file at `path`.
    public init(path: String, signingKey: ECDSAPrivateKey, settings: Settings = Settings()) throws(DatabaseError) {
        try self.init(.sqlite(path: path), signingKey: signingKey, settings: settings)
    }

    /// A new 8-digit code for one test result (the admin command).
    public func issueCode(testType: String, symptomDate: UTCDay?, testDate: UTCDay?, now: UnixTime) throws -> String {
        guard Self.testTypes.contains(testType) else { throw Refusal("invalid_test_type", "'\(testType)' is not confirmed, likely, negative or user-report") }
        for _ in 0..<10 {
            let code = String(format: "%08d", Int.random(in: 0..<100_000_000))
            do {
                try database.query(
                    "INSERT INTO verification_code (code, test_type, symptom_date, test_date, created, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    [
                        .text(code), .text(testType), symptomDate.map { .text($0.description) } ?? .null, testDate.map { .text($0.description) } ?? .null,
                        .integer(now.seconds), .integer(now.seconds + settings.codeLifetime),
                    ])
                return code
            } catch {
                // (A `catch let ... where` here crashes Swift 6.3.1's SIL verifier.)
                guard error.isConstraint else { throw error }
                continue  // that code exists: draw again
            }
        }
        throw Refusal("internal_error", "no free code after 10 draws", status: 500)
    }

    public struct Verified: Sendable, Equatable {
        public var testType: String
        public var symptomDate: String?
        public var testDate: String?
        public var token: String
    }

    /// `/api/verify`: a code, once, within its lifetime, of an accepted type (`acceptedTestTypes`)
    /// → a token. A code of a type not accepted is `unsupported_test_type` (412) and stays unclaimed.
    public func verify(code: String, accept: Set<String>, now: UnixTime) throws -> Verified {
        guard code.count >= 6, code.count <= 20, code.allSatisfy(\.isNumber) else { throw Refusal("code_invalid", "the code is not a verification code") }
        return try database.transaction { () throws -> Verified in
            guard let row = try database.query(
                "SELECT test_type, symptom_date, test_date, expires, claimed FROM verification_code WHERE code = ?1", [.text(code)]
            ).first else { throw Refusal("code_not_found", "no such code") }
            guard row[4] == .null else { throw Refusal("code_invalid", "the code was already used") }
            guard (row[3].integer ?? 0) > now.seconds else { throw Refusal("code_expired", "the code has expired") }
            let testType = row[0].text ?? ""
            guard accept.contains(testType) else {
                throw Refusal("unsupported_test_type", "the code is for a \(testType) test, which the device does not accept", status: 412)
            }
            // Only if still unclaimed: a replica may have claimed it since the look above.
            guard try !database.query(
                "UPDATE verification_code SET claimed = ?2 WHERE code = ?1 AND claimed IS NULL RETURNING code", [.text(code), .integer(now.seconds)]
            ).isEmpty else { throw Refusal("code_invalid", "the code was already used") }
            let id = UUID().uuidString
            try database.query(
                "INSERT INTO verification_token (id, test_type, symptom_date, expires) VALUES (?1, ?2, ?3, ?4)",
                [.text(id), .text(testType), row[1], .integer(now.seconds + settings.tokenLifetime)])
            let token = try JWT.sign(
                ["iss": settings.issuer, "aud": settings.issuer, "sub": id, "iat": now.seconds, "exp": now.seconds + settings.tokenLifetime],
                keyID: settings.keyID, key: signingKey)
            return Verified(testType: testType, symptomDate: row[1].text, testDate: row[2].text, token: token)
        }
    }

    /// `/api/certificate`: a token, once, and the 32-byte HMAC of the keys → a certificate JWT
    /// with `tekmac`, `reportType` and `symptomOnsetInterval`.
    public func certificate(token: String, keysHMAC: String, now: UnixTime) throws -> String {
        guard let hmac = PublishValidator.decodeBase64(keysHMAC), hmac.count == 32 else { throw Refusal("hmac_invalid", "ekeyhmac is not 32 bytes of base64") }
        let publicKey = try ECDSAPublicKey(pem: signingKey.publicKeyPEM)
        let claims: [String: Any]
        do {
            claims = try JWT.verify(token, key: publicKey, now: now.seconds)
        } catch {
            throw Refusal(error.reason == "expired" ? "token_expired" : "token_invalid", "the token \(error.reason)")
        }
        guard let id = claims["sub"] as? String else { throw Refusal("token_invalid", "the token has no subject") }
        return try database.transaction { () throws -> String in
            guard let row = try database.query("SELECT test_type, symptom_date, used FROM verification_token WHERE id = ?1", [.text(id)]).first else {
                throw Refusal("token_invalid", "the token is unknown")
            }
            guard row[2] == .null else { throw Refusal("token_invalid", "the token was already used") }
            guard try !database.query(
                "UPDATE verification_token SET used = ?2 WHERE id = ?1 AND used IS NULL RETURNING id", [.text(id), .integer(now.seconds)]
            ).isEmpty else { throw Refusal("token_invalid", "the token was already used") }
            var certificate: [String: Any] = [
                "iss": settings.issuer, "aud": settings.audience, "iat": now.seconds, "nbf": now.seconds - 60,
                "exp": now.seconds + settings.certificateLifetime, "tekmac": Data(hmac).base64EncodedString(), "reportType": row[0].text ?? "confirmed",
            ]
            if let symptom = row[1].text.flatMap(UTCDay.init(parsing:)), let interval = symptom.firstInterval {
                certificate["symptomOnsetInterval"] = Int64(interval.rawValue)
            }
            return try JWT.sign(certificate, keyID: settings.keyID, key: signingKey)
        }
    }
}
