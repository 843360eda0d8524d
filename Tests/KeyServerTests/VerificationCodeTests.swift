// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyServer
import Testing

/// Codes as ENVS issues them: a short and a long code per test result, each with its own
/// lifetime, stored as HMACs only; an older table of plain codes upgraded.
@Suite(.postgreSQLServer) struct VerificationCodeTests {
    static let now = PublishValidatorTests.now
    static let everyType = Set(Verifier.testTypes)

    static func verifier(_ database: TestDatabase, key: CodeHMACKey? = nil) throws -> Verifier {
        try Verifier(database.verification, signingKey: try ECDSAPrivateKey(), codeKey: try key ?? TestDatabase.codeKey(), now: now)
    }

    static func refusal(_ body: () async throws -> Verifier.Verified) async -> Verifier.Refusal? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? Verifier.Refusal
        }
    }

    /// ENVS's stored form: HMAC-SHA512 under the key, unpadded URL-safe base64.
    static func storedForm(_ code: String) -> String {
        Data(Digest.hmacSHA512(key: Array(1...32), message: Array(code.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test(arguments: Engine.available)
    func codesHaveTheReferenceFormatsAndLifetimes(_ engine: Engine) async throws {
        let verifier = try Self.verifier(try TestDatabase(engine))
        var longCharacters = Set<Character>()
        var digits = Set<Character>()
        for _ in 0..<40 {
            let issued = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
            #expect(issued.code.count == 8 && issued.code.allSatisfy { ("0"..."9").contains($0) }, "\(issued.code)")
            #expect(issued.longCode.count == 16 && issued.longCode.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }, "\(issued.longCode)")
            #expect(issued.expires == Self.now.adding(seconds: 15 * 60))
            #expect(issued.longExpires == Self.now.adding(seconds: 24 * 3600))
            longCharacters.formUnion(issued.longCode)
            digits.formUnion(issued.code)
        }
        // 640 long-code characters and 320 digits: each of the 36 and the 10 appears (all but
        // certainly, unless the draw is not uniform over the alphabet).
        #expect(longCharacters.count == 36)
        #expect(digits.count == 10)
    }

    @Test func rulesStayWithinTheReferenceBounds() throws {
        let rules = try CodeRules(length: 6, lifetime: 3600, longLength: 12, longLifetime: 86_400)
        #expect(rules.length == 6 && rules.longLifetime == 86_400)
        #expect(throws: CodeRules.Invalid.self) { try CodeRules(length: 5, lifetime: 900, longLength: 16, longLifetime: 86_400) }
        #expect(throws: CodeRules.Invalid.self) { try CodeRules(length: 8, lifetime: 3601, longLength: 16, longLifetime: 86_400) }
        #expect(throws: CodeRules.Invalid.self) { try CodeRules(length: 8, lifetime: 900, longLength: 11, longLifetime: 86_400) }
        #expect(throws: CodeRules.Invalid.self) { try CodeRules(length: 8, lifetime: 900, longLength: 16, longLifetime: 86_401) }
        #expect(throws: CodeRules.Invalid.self) { try CodeRules(length: 21, lifetime: 900, longLength: 16, longLifetime: 86_400) }
    }

    @Test(arguments: Engine.available)
    func eitherCodeVerifiesAndTheLongOneAlsoInCapitals(_ engine: Engine) async throws {
        let verifier = try Self.verifier(try TestDatabase(engine))
        let byShort = try await verifier.issueCode(testType: "likely", symptomDate: nil, testDate: nil, now: Self.now)
        let byLong = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        let inCapitals = try await verifier.issueCode(testType: "negative", symptomDate: nil, testDate: nil, now: Self.now)
        #expect(try await verifier.verify(code: byShort.code, accept: Self.everyType, now: Self.now).testType == "likely")
        #expect(try await verifier.verify(code: byLong.longCode, accept: Self.everyType, now: Self.now).testType == "confirmed")
        #expect(try await verifier.verify(code: " \(inCapitals.longCode.uppercased())\n", accept: Self.everyType, now: Self.now).testType == "negative")
    }

    @Test(arguments: Engine.available)
    func theShortCodeLastsFifteenMinutesAndTheLongOneADay(_ engine: Engine) async throws {
        let verifier = try Self.verifier(try TestDatabase(engine))
        let quarterHour = Self.now.adding(seconds: 15 * 60)
        let day = Self.now.adding(seconds: 24 * 3600)
        let late = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        #expect(await Self.refusal { try await verifier.verify(code: late.code, accept: Self.everyType, now: quarterHour) }?.code == "code_expired")
        // The same row's long code still works, and an expired short code claimed nothing.
        #expect(try await verifier.verify(code: late.longCode, accept: Self.everyType, now: quarterHour).testType == "confirmed")

        let lastSecond = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        #expect(try await verifier.verify(code: lastSecond.code, accept: Self.everyType, now: quarterHour.adding(seconds: -1)).testType == "confirmed")

        let tooLate = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        #expect(await Self.refusal { try await verifier.verify(code: tooLate.longCode, accept: Self.everyType, now: day) }?.code == "code_expired")
        #expect(try await verifier.verify(code: tooLate.longCode, accept: Self.everyType, now: day.adding(seconds: -1)).testType == "confirmed")
    }

    @Test(arguments: Engine.available)
    func usingOneCodeUsesTheOther(_ engine: Engine) async throws {
        let verifier = try Self.verifier(try TestDatabase(engine))
        let first = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        _ = try await verifier.verify(code: first.code, accept: Self.everyType, now: Self.now)
        #expect(await Self.refusal { try await verifier.verify(code: first.longCode, accept: Self.everyType, now: Self.now) }?.code == "code_invalid")
        let second = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        _ = try await verifier.verify(code: second.longCode, accept: Self.everyType, now: Self.now)
        #expect(await Self.refusal { try await verifier.verify(code: second.code, accept: Self.everyType, now: Self.now) }?.code == "code_invalid")
    }

    /// ENVS pkg/controller/verifyapi/verify.go: not found and already used are both
    /// "verification code invalid", so a guesser cannot tell a spent code from none; so is
    /// anything that cannot be a code.
    @Test(arguments: Engine.available)
    func anUnknownCodeAndAUsedOneGetTheSameAnswer(_ engine: Engine) async throws {
        let verifier = try Self.verifier(try TestDatabase(engine))
        let issued = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        _ = try await verifier.verify(code: issued.code, accept: Self.everyType, now: Self.now)
        let used = await Self.refusal { try await verifier.verify(code: issued.code, accept: Self.everyType, now: Self.now) }
        #expect(used == Verifier.Refusal("code_invalid", "verification code invalid"))
        for unknown in ["12345678", "abcdefgh12345678", "12345", String(repeating: "1", count: 21), "1234-5678", "١٢٣٤٥٦٧٨", "ａｂｃｄｅｆｇｈ", ""] {
            #expect(await Self.refusal { try await verifier.verify(code: unknown, accept: Self.everyType, now: Self.now) } == used, "\(unknown)")
        }
    }

    /// Neither code is in the table (read back on a connection of its own), nor, with SQLite, in
    /// the file or its log; what is there is each code's HMAC as ENVS stores it.
    @Test(arguments: Engine.available)
    func theDatabaseHoldsOnlyHMACs(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let verifier = try Self.verifier(database)
        var issued = [IssuedCode]()
        for _ in 0..<5 { issued.append(try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)) }
        _ = try await verifier.verify(code: issued[0].code, accept: Self.everyType, now: Self.now)
        let stored = try database.verificationText("SELECT * FROM verification_codes").flatMap { $0 }.joined(separator: " ")
        let files = String(decoding: try database.verificationFileBytes(), as: UTF8.self)
        for codes in issued {
            for code in [codes.code, codes.longCode] {
                #expect(!stored.contains(code))
                #expect(!files.contains(code))
            }
        }
        let rows = try database.verificationText("SELECT code_hmac, long_code_hmac FROM verification_codes")
        #expect(Set(rows.map { $0[0] }) == Set(issued.map { Self.storedForm($0.code) }))
        #expect(Set(rows.map { $0[1] }) == Set(issued.map { Self.storedForm($0.longCode) }))
    }

    /// An older version's `verification_code` of plain codes: its live code moves as an HMAC and
    /// still verifies, used and expired ones are dropped, and the table is gone.
    @Test(arguments: Engine.available)
    func anOlderPlainCodeTableIsUpgraded(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let integer = engine == .sqlite ? "INTEGER" : "BIGINT"
        let (live, used, expired) = ("11112222", "33334444", "55556666")
        try database.executeOnVerification(
            """
            CREATE TABLE verification_code (code TEXT PRIMARY KEY, test_type TEXT NOT NULL, symptom_date TEXT, test_date TEXT,
                created \(integer) NOT NULL, expires \(integer) NOT NULL, claimed \(integer));
            INSERT INTO verification_code VALUES ('\(live)', 'likely', '2026-11-18', NULL, \(Self.now.seconds - 60), \(Self.now.seconds + 3600), NULL);
            INSERT INTO verification_code VALUES ('\(used)', 'confirmed', NULL, NULL, \(Self.now.seconds - 60), \(Self.now.seconds + 3600), \(Self.now.seconds - 1));
            INSERT INTO verification_code VALUES ('\(expired)', 'confirmed', NULL, NULL, \(Self.now.seconds - 90_000), \(Self.now.seconds), NULL);
            """)
        // Not vacuous: the plain codes are in the SQLite file before.
        if engine == .sqlite { #expect(String(decoding: try database.verificationFileBytes(), as: UTF8.self).contains(used)) }
        let verifier = try Self.verifier(database)
        #expect(try !database.verificationTables().contains("verification_code"))
        #expect(try database.verificationTables().contains("verification_codes"))
        #expect(
            try database.verificationText("SELECT code_hmac, long_code_hmac, long_expires FROM verification_codes") == [
                [Self.storedForm(live), "NULL", "NULL"]
            ])
        let files = String(decoding: try database.verificationFileBytes(), as: UTF8.self)
        for code in [live, used, expired] { #expect(!files.contains(code), "\(code) is still in the SQLite files") }

        let verified = try await verifier.verify(code: live, accept: Self.everyType, now: Self.now)
        #expect(verified.testType == "likely" && verified.symptomDate == "2026-11-18")
        for gone in [used, expired] {
            #expect(await Self.refusal { try await verifier.verify(code: gone, accept: Self.everyType, now: Self.now) }?.code == "code_invalid")
        }
        // Opened again (a restart, or another replica), nothing is left to upgrade.
        let again = try Self.verifier(database)
        #expect(try await again.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now).code.count == 8)
    }

    /// The data directory's key: made once (0600, base64 of 32 bytes), read again after a
    /// restart, so a code issued before it verifies after; another key finds no code.
    @Test(arguments: Engine.available)
    func theKeyFileIsMadeOnceAndCodesOutliveARestart(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let path = database.directory.path + "/" + CodeHMACKey.fileName
        let issued: IssuedCode
        do {
            let verifier = try Self.verifier(database, key: try CodeHMACKey.loadOrCreate(path: path))
            issued = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now)
        }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        let contents = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Data(base64Encoded: contents.trimmingCharacters(in: .newlines))?.count == 32)

        let other = try Self.verifier(database, key: try CodeHMACKey.random())
        #expect(await Self.refusal { try await other.verify(code: issued.code, accept: Self.everyType, now: Self.now) }?.code == "code_invalid")
        let restarted = try Self.verifier(database, key: try CodeHMACKey.loadOrCreate(path: path))
        #expect(try await restarted.verify(code: issued.longCode, accept: Self.everyType, now: Self.now).testType == "confirmed")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == contents)
    }

    @Test func aKeyTooShortOrNotBase64IsRefusedNamingTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/" + CodeHMACKey.fileName
        try (Data(repeating: 1, count: 16).base64EncodedString() + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: CodeHMACKey.Failure("\(path): the key is 16 bytes; at least 32 are needed")) { try CodeHMACKey.loadOrCreate(path: path) }
        try "not base64!".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: CodeHMACKey.Failure("\(path): the key is not base64 (of 32 or more bytes)")) { try CodeHMACKey.loadOrCreate(path: path) }
        #expect(throws: CodeHMACKey.Failure.self) { try CodeHMACKey.loadOrCreate(path: directory.path + "/missing/" + CodeHMACKey.fileName) }
    }

    /// `POST /admin/codes` answers with ENVS's IssueCodeResponse names, and the long code it
    /// gives verifies over `/api/verify`.
    @Test(arguments: Engine.available)
    func theIssueAPIAnswersBothCodesAndTheirExpiries(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let signing = try ECDSAPrivateKey()
        let verifier = try Verifier(database.verification, signingKey: signing, codeKey: try TestDatabase.codeKey())
        var settings = KeyServerAPI.Settings(healthAuthorities: ["x"], deviceAPIKey: "device", exportDirectory: database.directory.path)
        settings.adminAPIKey = "admin"
        let api = KeyServerAPI(
            store: try KeyStore(database.keys), verifier: verifier,
            check: CertificateCheck(verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: "i", audience: "a"), settings: settings,
            clock: { Self.now })
        let issued = await api.handle(
            .init(method: "POST", path: "/admin/codes", headers: ["X-API-Key": "admin"], body: Array(#"{"testType":"confirmed"}"#.utf8)))
        #expect(issued.status == 200)
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])
        #expect(Set(fields.keys) == ["code", "longCode", "expiresAt", "expiresAtTimestamp", "longExpiresAt", "longExpiresAtTimestamp"])
        #expect(fields["expiresAtTimestamp"] as? Int == Int(Self.now.seconds + 15 * 60))
        #expect(fields["longExpiresAtTimestamp"] as? Int == Int(Self.now.seconds + 24 * 3600))
        // Go's time.RFC1123 in UTC, as ENVS formats them: now is 2026-11-21T12:00:00Z.
        #expect(fields["expiresAt"] as? String == "Sat, 21 Nov 2026 12:15:00 UTC")
        #expect(fields["longExpiresAt"] as? String == "Sun, 22 Nov 2026 12:00:00 UTC")
        let longCode = try #require(fields["longCode"] as? String)
        let verified = await api.handle(
            .init(
                method: "POST", path: "/api/verify", headers: ["X-API-Key": "device", "Content-Type": "application/json"],
                body: Array(#"{"code":"\#(longCode)"}"#.utf8)))
        #expect(verified.status == 200, "\(String(decoding: verified.body, as: UTF8.self))")
    }
}

/// Codes draw their characters from the verifier's injected source (without bias, through
/// `RandomSourceGenerator`): two verifiers given the same predictable source issue the same codes.
extension VerificationCodeTests {
    @Test func codesComeFromTheInjectedSource() async throws {
        var issued = [IssuedCode]()
        for _ in 0..<2 {
            let database = try TestDatabase(.sqlite)
            var settings = Verifier.Settings()
            settings.random = CountingRandom()
            let verifier = try Verifier(
                database.verification, signingKey: try ECDSAPrivateKey(), codeKey: try TestDatabase.codeKey(), settings: settings, now: Self.now)
            issued.append(try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now))
        }
        #expect(issued[0].code == issued[1].code)
        #expect(issued[0].longCode == issued[1].longCode)
        #expect(issued[0].code.count == 8 && issued[0].longCode.count == 16)
    }
}
