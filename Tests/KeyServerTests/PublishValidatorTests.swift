// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCore
import Foundation
import KeyServer
import Testing

/// The publish rules of the reference server, request by request.
@Suite(.ownThreads) struct PublishValidatorTests {
    /// 2026-11-21 12:00 UTC: interval 2,992,104 (day start 2,992,032).
    static let now = UnixTime(seconds: 1_795_262_400)
    static let today: Int64 = 2_992_032

    static func request(_ keys: [String], extra: String = "") throws(PublishError) -> PublishRequest {
        try PublishRequest(json: Array(#"{"temporaryExposureKeys": [\#(keys.joined(separator: ","))], "healthAuthorityID": "ch.example"\#(extra)}"#.utf8))
    }

    static func key(_ byte: UInt8, start: Int64, period: Int64? = nil, risk: Int64? = nil) -> String {
        let key = Data(repeating: byte, count: 16).base64EncodedString()
        var fields = [#""key": "\#(key)""#, #""rollingStartNumber": \#(start)"#]
        if let period { fields.append(#""rollingPeriod": \#(period)"#) }
        if let risk { fields.append(#""transmissionRisk": \#(risk)"#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    @Test func pastKeysAreExportableAtOnceAndTodaysWaitForTheDayToEnd() throws {
        let request = try Self.request([Self.key(1, start: Self.today - 144, risk: 4), Self.key(2, start: Self.today)])
        let outcome = try PublishValidator().validate(request, now: Self.now)
        #expect(outcome.accepted.count == 2)
        #expect(!outcome.partialFailure)
        #expect(outcome.accepted[0].key.rollingPeriod == 144)
        #expect(outcome.accepted[0].transmissionRisk == 4)
        #expect(outcome.accepted[0].exportAfter == Self.now)
        // Still valid: held until tomorrow 02:00 UTC.
        #expect(outcome.accepted[1].exportAfter == UnixTime(seconds: 1_795_305_600 + 7200))
    }

    @Test func releasingSameDayKeysLiftsTheEmbargoOnly() throws {
        let request = try Self.request([Self.key(2, start: Self.today)])
        var validator = PublishValidator()
        validator.releaseSameDayKeys = true
        let outcome = try validator.validate(request, now: Self.now)
        #expect(outcome.accepted.map(\.exportAfter) == [Self.now])
        // The other rules still hold: a key starting in the future is dropped.
        let future = try validator.validate(try Self.request([Self.key(2, start: Self.today), Self.key(3, start: Self.today + 300)]), now: Self.now)
        #expect(future.accepted.count == 1)
        #expect(future.partialFailure)
    }

    @Test func badRequestsAreRefusedWithTheReferenceCodes() {
        func code(_ body: String) -> PublishError.Code? {
            do {
                _ = try PublishValidator().validate(try PublishRequest(json: Array(body.utf8)), now: Self.now)
                return nil
            } catch {
                return error.code
            }
        }
        let good = Self.key(1, start: Self.today)
        #expect(code("not json") == .badRequest)
        #expect(code("[1]") == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [\#(good)]}"#) == .unknownHealthAuthorityID)
        #expect(code(#"{"temporaryExposureKeys": [], "healthAuthorityID": "x"}"#) == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [\#(good)], "healthAuthorityID": "x", "surprise": 1}"#) == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [{"key": "AAAA", "rollingStartNumber": 1}], "healthAuthorityID": "x"}"#) == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [\#(Self.key(1, start: Self.today, period: 145))], "healthAuthorityID": "x"}"#) == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [\#(Self.key(1, start: Self.today, risk: 9))], "healthAuthorityID": "x"}"#) == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [{"key": "AAAAAAAAAAAAAAAAAAAAAA==", "rollingStartNumber": true}], "healthAuthorityID": "x"}"#) == .badRequest)
        #expect(code(#"{"temporaryExposureKeys": [{"key": "AAAAAAAAAAAAAAAAAAAAAA==", "rollingStartNumber": 1.5}], "healthAuthorityID": "x"}"#) == .badRequest)
        let thirtyOne = (0..<31).map { Self.key(UInt8($0), start: Self.today - 144 * Int64($0 % 10)) }
        #expect(code(#"{"temporaryExposureKeys": [\#(thirtyOne.joined(separator: ","))], "healthAuthorityID": "x"}"#) == .badRequest)
        let fourSameStart = (0..<4).map { Self.key(UInt8($0), start: Self.today - 144) }
        #expect(code(#"{"temporaryExposureKeys": [\#(fourSameStart.joined(separator: ","))], "healthAuthorityID": "x"}"#) == .badRequest)
        let big = #"{"temporaryExposureKeys": [\#(good)], "healthAuthorityID": "x", "padding": "\#(String(repeating: "A", count: 70_000))"}"#
        #expect(code(big) == .badRequest)
    }

    @Test func keysOutOfRangeAreDroppedAsAPartialFailure() throws {
        let request = try Self.request(
            [Self.key(1, start: Self.today + 144), Self.key(2, start: Self.today - 144 * 16), Self.key(3, start: Self.today - 144 * 3)],
            extra: #", "symptomOnsetInterval": \#(Self.today - 144 * 20)"#)
        let outcome = try PublishValidator().validate(request, now: Self.now)
        #expect(outcome.partialFailure)
        #expect(outcome.warnings.count == 3)
        #expect(outcome.warnings[0].contains("future"))
        #expect(outcome.warnings[1].contains("older than 360 hours"))
        #expect(outcome.warnings[2].contains("symptom onset"))
        #expect(outcome.accepted.isEmpty)
        let onset = try Self.request([Self.key(4, start: Self.today - 144 * 3)], extra: #", "symptomOnsetInterval": \#(Self.today - 144 * 5), "traveler": true"#)
        #expect(onset.traveler)
        #expect(try PublishValidator().validate(onset, now: Self.now).accepted.first?.daysSinceOnsetOfSymptoms == 2)
    }

    @Test func base64InEitherAlphabetWithOrWithoutPadding() throws {
        let bytes = Data((0..<16).map { UInt8(0xF8 + $0 % 8) })
        let standard = bytes.base64EncodedString()
        let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        for text in [standard, url] {
            let request = try Self.request([#"{"key": "\#(text)", "rollingStartNumber": \#(Self.today)}"#])
            #expect(try PublishValidator().validate(request, now: Self.now).accepted.first?.key.keyData.bytes == Array(bytes))
        }
    }

    /// The reference server reads symptomOnsetInterval as an int32 interval number and refuses what
    /// is not one; this one once trapped turning the days since onset into an Int32.
    @Test func aSymptomOnsetThatIsNoIntervalNumberIsABadRequest() throws {
        for onset in ["999999999999999", "4294967296", "-1"] {
            let request = try Self.request([Self.key(1, start: Self.today - 144)], extra: #", "symptomOnsetInterval": \#(onset)"#)
            #expect(throws: PublishError(.badRequest, "symptomOnsetInterval \(onset) is not an interval number")) {
                try PublishValidator().validate(request, now: Self.now)
            }
        }
        // The largest interval number is one: the key is only too far from it.
        let far = try Self.request([Self.key(1, start: Self.today - 144)], extra: #", "symptomOnsetInterval": 4294967295"#)
        #expect(try PublishValidator().validate(far, now: Self.now).warnings.first?.contains("symptom onset") == true)
    }
}
