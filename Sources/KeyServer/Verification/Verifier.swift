// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
package import ENCore
package import ENCrypto
import Foundation
import Storage
import SystemCalls

/// The verification server's side (google/exposure-notifications-verification-server docs/api.md):
/// codes issued by an administrator, `/api/verify` turning a code into a token once, and
/// `/api/certificate` turning the token and the keys' HMAC into a certificate the key server checks.
package actor Verifier {
    /// A refusal with the reference error code.
    package struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        package var code: String
        package var message: String
        package var status: Int
        package var description: String { "\(code): \(message)" }
        package init(_ code: String, _ message: String, status: Int = 400) {
            self.code = code
            self.message = message
            self.status = status
        }
    }

    package struct Settings: Sendable {
        package var issuer = "gaen-keyserver-verification"
        package var audience = "gaen-keyserver"
        package var keyID = "v1"
        /// The codes' lengths and lifetimes: ENVS's defaults unless set.
        package var codes = CodeRules()
        /// Where codes' digits and letters come from (libcrypto's CSPRNG; a test's source).
        package var random: any RandomBytesSource = SystemRandom()
        package var tokenLifetime: Int64 = 24 * 3600
        package var certificateLifetime: Int64 = 15 * 60
        package init() {}
    }

    package static let testTypes = ["confirmed", "likely", "negative", "user-report"]

    /// The test types a device's `accept` lets through, as the reference's GetAcceptedTestTypes
    /// (exposure-notifications-verification-server pkg/api/util.go): none or an empty list means
    /// all; the types form a hierarchy (likely includes confirmed, negative includes likely), and
    /// user-report adds itself and confirmed. Anything else is `invalid_test_type`.
    package static func acceptedTestTypes(_ accept: Any?) throws(Refusal) -> Set<String> {
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
    let codeKey: CodeHMACKey
    package nonisolated let settings: Settings
    /// Every statement blocks: the verifier runs on a thread of its own, as `KeyStore` does.
    private let thread = DatabaseThread(name: "verifier")

    package nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    deinit { thread.stop() }

    /// Opens the verification tables at `location` (beside the keys' in a PostgreSQL database),
    /// creating them if needed, with codes stored under `codeKey`: every verifier on the same
    /// tables needs the same key. Codes of the older plain-text table that are still usable at
    /// `now` (the wall clock's unless given) move into the new one (`CodeTable.upgradePlainCodes`).
    package init(
        _ location: DatabaseLocation, signingKey: ECDSAPrivateKey, codeKey: CodeHMACKey, settings: Settings = Settings(), now: UnixTime? = nil
    ) throws(DatabaseError) {
        database = try location.open()
        self.signingKey = signingKey
        self.codeKey = codeKey
        self.settings = settings
        let integer = database.engine.types.integer
        try database.createSchema(
            CodeTable.schema(database.engine.types) + """
                CREATE TABLE IF NOT EXISTS verification_token (
                    id TEXT PRIMARY KEY,
                    test_type TEXT NOT NULL,
                    symptom_date TEXT,
                    expires \(integer) NOT NULL,
                    used \(integer)
                );
                """)
        try CodeTable.upgradePlainCodes(database, key: codeKey, now: now ?? SystemWallClock().now())
    }

    /// Opens the verification tables in the SQLite file at `path`.
    package init(
        path: String, signingKey: ECDSAPrivateKey, codeKey: CodeHMACKey, settings: Settings = Settings(), now: UnixTime? = nil
    ) throws(DatabaseError) {
        try self.init(.sqlite(path: path), signingKey: signingKey, codeKey: codeKey, settings: settings, now: now)
    }

    /// A new short and long code for one test result (the admin command and `/admin/codes`), in
    /// one row, as ENVS `CommitCode`; only their HMACs are stored.
    package func issueCode(testType: String, symptomDate: UTCDay?, testDate: UTCDay?, now: UnixTime) throws -> IssuedCode {
        guard Self.testTypes.contains(testType) else { throw Refusal("invalid_test_type", "'\(testType)' is not confirmed, likely, negative or user-report") }
        let rules = settings.codes
        var generator = RandomSourceGenerator(settings.random)
        for _ in 0..<10 {
            let issued = IssuedCode(
                code: VerificationCode.shortCode(length: rules.length, using: &generator),
                longCode: VerificationCode.longCode(length: rules.longLength, using: &generator),
                expires: now.adding(seconds: rules.lifetime), longExpires: now.adding(seconds: rules.longLifetime))
            let (short, long) = (codeKey.hmac(issued.code), codeKey.hmac(issued.longCode))
            do {
                let stored = try database.transaction { () throws -> Bool in
                    // Each code unique across both columns, so that a lookup of either finds one row
                    // (a long code of digits only could equal another row's short code).
                    guard
                        try database.query(
                            "SELECT 1 FROM verification_codes WHERE code_hmac IN (?1, ?2) OR long_code_hmac IN (?1, ?2)", [.text(short), .text(long)]
                        ).isEmpty
                    else { return false }
                    try database.query(
                        """
                        INSERT INTO verification_codes (code_hmac, long_code_hmac, test_type, symptom_date, test_date, created, expires, long_expires)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                        """,
                        [
                            .text(short), .text(long), .text(testType), symptomDate.map { .text($0.description) } ?? .null,
                            testDate.map { .text($0.description) } ?? .null, .integer(now.seconds), .integer(issued.expires.seconds),
                            .integer(issued.longExpires.seconds),
                        ])
                    return true
                }
                if stored { return issued }
            } catch {
                // Another replica stored one of these codes between the look and the insert.
                // (A `catch let ... where` here crashes Swift 6.3.1's SIL verifier.)
                guard (error as? DatabaseError)?.isConstraint == true else { throw error }
            }
        }
        throw Refusal("internal_error", "no free code after 10 draws", status: 500)
    }

    package struct Verified: Sendable, Equatable {
        package var testType: String
        package var symptomDate: String?
        package var testDate: String?
        package var token: String
    }

    /// `/api/verify`: a short or long code, once, within its own lifetime, of an accepted type
    /// (`acceptedTestTypes`) → a token, as ENVS pkg/database/token.go `VerifyCodeAndIssueToken`.
    /// An unknown code and a used one get the same answer, so a guesser learns nothing from it;
    /// a code of a type not accepted is `unsupported_test_type` (412) and stays unclaimed. Using
    /// either code of a row uses both.
    package func verify(code input: String, accept: Set<String>, now: UnixTime) throws -> Verified {
        let invalid = Refusal("code_invalid", "verification code invalid")
        guard let code = VerificationCode.normalized(input) else { throw invalid }
        let hmac = codeKey.hmac(code)
        return try database.transaction { () throws -> Verified in
            guard
                let row = try database.query(
                    """
                    SELECT code_hmac, test_type, symptom_date, test_date, expires, long_expires, claimed
                    FROM verification_codes WHERE code_hmac = ?1 OR long_code_hmac = ?1
                    """, [.text(hmac)]
                ).first, let rowKey = row[0].text
            else { throw invalid }
            // The expiry of the code that was sent (ENVS vercode.go `IsCodeExpired`), checked
            // before the claim as ENVS does.
            let expires = rowKey == hmac ? row[4] : row[5]
            guard (expires.integer ?? 0) > now.seconds else { throw Refusal("code_expired", "verification code expired") }
            guard row[6] == .null else { throw invalid }
            let testType = row[1].text ?? ""
            guard accept.contains(testType) else {
                throw Refusal("unsupported_test_type", "the code is for a \(testType) test, which the device does not accept", status: 412)
            }
            // Only if still unclaimed: a replica may have claimed it since the look above.
            guard
                try !database.query(
                    "UPDATE verification_codes SET claimed = ?2 WHERE code_hmac = ?1 AND claimed IS NULL RETURNING code_hmac",
                    [.text(rowKey), .integer(now.seconds)]
                ).isEmpty
            else { throw invalid }
            let id = UUID().uuidString
            try database.query(
                "INSERT INTO verification_token (id, test_type, symptom_date, expires) VALUES (?1, ?2, ?3, ?4)",
                [.text(id), .text(testType), row[2], .integer(now.seconds + settings.tokenLifetime)])
            let token = try JWT.sign(
                ["iss": settings.issuer, "aud": settings.issuer, "sub": id, "iat": now.seconds, "exp": now.seconds + settings.tokenLifetime],
                keyID: settings.keyID, key: signingKey)
            return Verified(testType: testType, symptomDate: row[2].text, testDate: row[3].text, token: token)
        }
    }

    /// `/api/certificate`: a token, once, and the 32-byte HMAC of the keys → a certificate JWT
    /// with `tekmac`, `reportType` and `symptomOnsetInterval`.
    package func certificate(token: String, keysHMAC: String, now: UnixTime) throws -> String {
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
            guard
                try !database.query(
                    "UPDATE verification_token SET used = ?2 WHERE id = ?1 AND used IS NULL RETURNING id", [.text(id), .integer(now.seconds)]
                ).isEmpty
            else { throw Refusal("token_invalid", "the token was already used") }
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
