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

    static func key(_ byte: UInt8, start: Int64, period: Int64? = 144, risk: Int64? = nil) -> String {
        let key = Data(repeating: byte, count: 16).base64EncodedString()
        var fields = [#""key": "\#(key)""#, #""rollingStartNumber": \#(start)"#]
        if let period { fields.append(#""rollingPeriod": \#(period)"#) }
        if let risk { fields.append(#""transmissionRisk": \#(risk)"#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// Issue 53: a key that ended before its publication waits the delay after the publication
    /// (it was exported at once, and its last RPIs could be replayed for two hours); a key still
    /// valid waits for its day to end, plus the delay.
    @Test func pastKeysWaitTwoHoursAfterPublicationAndTodaysWaitForTheDayToEnd() throws {
        let request = try Self.request([Self.key(1, start: Self.today - 144, risk: 4), Self.key(2, start: Self.today)])
        let outcome = try PublishValidator().validate(request, now: Self.now)
        #expect(outcome.accepted.count == 2)
        #expect(!outcome.partialFailure)
        #expect(outcome.accepted[0].key.rollingPeriod == 144)
        #expect(outcome.accepted[0].transmissionRisk == 4)
        #expect(outcome.accepted[0].exportAfter == Self.now.adding(seconds: 7200))
        // gaend's own share: today's key cut to now, ended a minute ago.
        let cut = try PublishValidator().validate(try Self.request([Self.key(3, start: Self.today, period: 71)]), now: Self.now)
        #expect(cut.accepted.map(\.exportAfter) == [Self.now.adding(seconds: 7200)])
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
        #expect(code(#"{"temporaryExposureKeys": [{"key": "AAAA", "rollingStartNumber": 1, "rollingPeriod": 144}], "healthAuthorityID": "x"}"#) == .badRequest)
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
            [
                Self.key(1, start: Self.today + 144), Self.key(2, start: Self.today - 144 * 16), Self.key(3, start: Self.today - 144 * 3),
                Self.key(5, start: Self.today - 144 * 10),
            ],
            extra: #", "symptomOnsetInterval": \#(Self.today - 144 * 20)"#)
        let outcome = try PublishValidator().validate(request, now: Self.now)
        #expect(outcome.partialFailure)
        #expect(outcome.warnings.count == 3)
        #expect(outcome.warnings[0].contains("future"))
        #expect(outcome.warnings[1].contains("older than 360 hours"))
        #expect(outcome.warnings[2].contains("symptom onset"))
        #expect(outcome.accepted.count == 1)
        let onset = try Self.request(
            [Self.key(4, start: Self.today - 144 * 3)], extra: #", "symptomOnsetInterval": \#(Self.today - 144 * 5), "traveler": true"#)
        #expect(onset.traveler)
        #expect(try PublishValidator().validate(onset, now: Self.now).accepted.first?.daysSinceOnsetOfSymptoms == 2)
    }

    @Test func base64InEitherAlphabetWithOrWithoutPadding() throws {
        let bytes = Data((0..<16).map { UInt8(0xF8 + $0 % 8) })
        let standard = bytes.base64EncodedString()
        let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        for text in [standard, url] {
            let request = try Self.request([#"{"key": "\#(text)", "rollingStartNumber": \#(Self.today), "rollingPeriod": 144}"#])
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
        // In the future, it is not used: the default (4 days ago) is.
        let far = try Self.request([Self.key(1, start: Self.today - 144)], extra: #", "symptomOnsetInterval": 4294967295"#)
        #expect(try PublishValidator().validate(far, now: Self.now).accepted.first?.daysSinceOnsetOfSymptoms == 3)
    }
}

/// The rules as the reference applies them (issue 17): internal/publish/model/exposure_model.go's
/// TransformPublish, AdjustAndValidate and ReportTypeTransmissionRisk, internal/jsonutil.
extension PublishValidatorTests {
    /// A bad key (base64, length, rolling period, risk, no rolling period at all) is dropped with a
    /// warning naming it, the others are kept; only when none is left is the request refused.
    @Test func aBadKeyIsDroppedAndOnlyARequestWithoutAGoodKeyIsRefused() throws {
        let bad = [
            #"{"key": "not base64!", "rollingStartNumber": \#(Self.today - 144), "rollingPeriod": 144}"#,
            #"{"key": "AAAA", "rollingStartNumber": \#(Self.today - 144), "rollingPeriod": 144}"#,
            Self.key(3, start: Self.today - 288, period: 145),
            Self.key(4, start: Self.today - 432, risk: 9),
            Self.key(5, start: Self.today - 576, period: nil),
        ]
        let outcome = try PublishValidator().validate(try Self.request(bad + [Self.key(6, start: Self.today - 720)]), now: Self.now)
        #expect(outcome.accepted.map(\.key.keyData.bytes) == [Array(repeating: 6, count: 16)])
        #expect(outcome.partialFailure)
        #expect(outcome.warnings.count == 5)
        for index in 0..<5 { #expect(outcome.warnings[index].hasPrefix("temporaryExposureKeys[\(index)]")) }
        // A key without rollingPeriod is the reference's int32 0: invalid, not a whole day.
        #expect(outcome.warnings[4].contains("rollingPeriod 0"))
        #expect { try PublishValidator().validate(try Self.request(bad), now: Self.now) } throws: { ($0 as? PublishError)?.code == .badRequest }
    }

    /// A key dropped for its distance from the symptom onset is a warning, not a partial failure.
    @Test func aKeyTooFarFromTheOnsetIsAWarningOnly() throws {
        let request = try Self.request(
            [Self.key(1, start: Self.today - 144), Self.key(2, start: Self.today - 144 * 15)], extra: #", "symptomOnsetInterval": \#(Self.today)"#)
        let outcome = try PublishValidator().validate(request, now: Self.now)
        #expect(outcome.accepted.count == 1)
        #expect(outcome.warnings.count == 1)
        #expect(!outcome.partialFailure)
    }

    /// Every key too far from the onset: no error (ENS refuses only when bad keys left nothing);
    /// the API then answers 200 with nothing inserted and the warnings.
    @Test func keysAllTooFarFromTheOnsetAreNoError() throws {
        let request = try Self.request(
            [Self.key(1, start: Self.today - 144 * 15), Self.key(2, start: Self.today - 144 * 15)], extra: #", "symptomOnsetInterval": \#(Self.today)"#)
        let outcome = try PublishValidator().validate(request, now: Self.now)
        #expect(outcome.accepted.isEmpty)
        #expect(outcome.warnings.count == 2)
        #expect(!outcome.partialFailure)
        // With a bad key beside them, nothing valid is left: refused.
        let mixed = try Self.request(
            [Self.key(1, start: Self.today - 144 * 15), Self.key(2, start: Self.today + 144 * 3)], extra: #", "symptomOnsetInterval": \#(Self.today)"#)
        #expect { try PublishValidator().validate(mixed, now: Self.now) } throws: { ($0 as? PublishError)?.code == .badRequest }
    }

    /// The request's onset when before now and at most 28 days old, else the certificate's,
    /// else 4 days ago; the days since onset follow from it for every key.
    @Test func theSymptomOnsetIsTheRequestsThenTheCertificatesThenFourDaysAgo() throws {
        func days(request onset: Int64?, certificate: Int64?) throws -> Int32? {
            let extra = onset.map { #", "symptomOnsetInterval": \#($0)"# } ?? ""
            return try PublishValidator().validate(
                try Self.request([Self.key(1, start: Self.today - 144)], extra: extra), certificateOnset: certificate, now: Self.now
            ).accepted.first?.daysSinceOnsetOfSymptoms
        }
        #expect(try days(request: Self.today - 144 * 3, certificate: Self.today - 144 * 5) == 2)
        #expect(try days(request: nil, certificate: Self.today - 144 * 5) == 4)
        // In the future, or older than 28 days: the certificate's is taken, else the default.
        #expect(try days(request: Self.today + 144, certificate: Self.today - 144 * 5) == 4)
        #expect(try days(request: Self.today - 144 * 29, certificate: Self.today - 144 * 2) == 1)
        // 28 days old is still taken: the key, 27 days after it, is then too far (dropped).
        #expect(try days(request: Self.today - 144 * 28, certificate: nil) == nil)
        #expect(try days(request: nil, certificate: nil) == 3)
        #expect(try days(request: Self.today - 144 * 29, certificate: Self.today + 144) == 3)
    }

    /// ReportTypeTransmissionRisk: a risk of 0 becomes 2 confirmed, 4 likely, 6 negative; a
    /// self-report keeps 0; a risk sent is kept.
    @Test func aTransmissionRiskOfZeroIsFilledInFromTheReportType() throws {
        let request = try Self.request([Self.key(1, start: Self.today - 144), Self.key(2, start: Self.today - 288, risk: 7)])
        for (type, risk) in [(Int32(1), Int32(2)), (2, 4), (5, 6), (3, 0)] {
            let outcome = try PublishValidator().validate(request, reportType: type, now: Self.now)
            #expect(outcome.accepted.map(\.transmissionRisk) == [risk, 7], "report type \(type)")
        }
    }

    /// Keys whose intervals overlap must start together (a key replaced the same day); otherwise
    /// the request is refused.
    @Test func overlappingKeysThatDoNotStartTogetherAreRefused() throws {
        let overlapping = try Self.request([Self.key(1, start: Self.today - 144, period: 144), Self.key(2, start: Self.today - 100, period: 10)])
        #expect { try PublishValidator().validate(overlapping, now: Self.now) } throws: {
            ($0 as? PublishError)?.code == .badRequest && "\($0)".contains("non aligned overlapping intervals")
        }
        let aligned = try Self.request([Self.key(1, start: Self.today - 144, period: 144), Self.key(2, start: Self.today - 144, period: 60)])
        #expect(try PublishValidator().validate(aligned, now: Self.now).accepted.count == 2)
        let adjacent = try Self.request([Self.key(1, start: Self.today - 144, period: 72), Self.key(2, start: Self.today - 72, period: 72)])
        #expect(try PublishValidator().validate(adjacent, now: Self.now).accepted.count == 2)
    }

    /// A key that started at noon is on the air until noon tomorrow: held until then plus the
    /// delay, not only until midnight plus the delay.
    @Test func aStillValidKeyIsHeldUntilItEndsAndItsDayIsOver() throws {
        let noon = Self.today + 72
        let outcome = try PublishValidator().validate(try Self.request([Self.key(1, start: noon), Self.key(2, start: Self.today - 144)]), now: Self.now)
        #expect(outcome.accepted[0].exportAfter == UnixTime(seconds: (noon + 144) * 600 + 7200))
        #expect(outcome.accepted[1].exportAfter == Self.now.adding(seconds: 7200))
    }

    /// The reference's body limit is 64,000 bytes (internal/jsonutil/unmarshal.go), not 64 KiB.
    @Test func theBodyLimitIs64000Bytes() throws {
        func body(_ size: Int) -> [UInt8] {
            let head = #"{"temporaryExposureKeys": [\#(Self.key(1, start: Self.today))], "healthAuthorityID": "x", "padding": ""#
            return Array((head + String(repeating: "A", count: size - head.utf8.count - 2) + #""}"#).utf8)
        }
        #expect(body(64_000).count == 64_000)
        _ = try PublishRequest(json: body(64_000))
        #expect(throws: PublishError.self) { try PublishRequest(json: body(64_001)) }
    }

    /// Issue 53, item 12: the same key twice in one request is refused as what it is.
    @Test func theSameKeyTwiceInOnePublishIsRefusedAsSuch() throws {
        let twice = try Self.request([Self.key(1, start: Self.today - 144), Self.key(1, start: Self.today - 144)])
        #expect { try PublishValidator().validate(twice, now: Self.now) } throws: {
            ($0 as? PublishError)?.code == .badRequest && "\($0)".contains("the same key appears twice in one publish")
        }
    }

    /// Issue 53, item 12: publish, verify and certificate take JSON only (415 otherwise, as ENS).
    @Test func onlyJSONIsTaken() {
        #expect(KeyServerAPI.isJSON("application/json"))
        #expect(KeyServerAPI.isJSON("Application/JSON; charset=utf-8"))
        #expect(!KeyServerAPI.isJSON(nil))
        #expect(!KeyServerAPI.isJSON("text/plain"))
        #expect(!KeyServerAPI.isJSON("application/x-www-form-urlencoded"))
    }

    /// The same through the API: a verify, a certificate or a publish without JSON's Content-Type
    /// is 415 before it is read (and costs no failed attempt).
    @Test func requestsWithoutJSONAre415() async throws {
        let server = try RateLimitTests.Server()
        for path in ["/api/verify", "/api/certificate", "/v1/publish"] {
            for headers in [["X-API-Key": "device-key"], ["X-API-Key": "device-key", "Content-Type": "text/plain"]] {
                let response = await server.api.handle(.init(method: "POST", path: path, headers: headers, body: Array("{}".utf8), client: "192.0.2.9"))
                #expect(response.status == 415, "\(path) \(headers)")
            }
        }
        let json = await server.post("/api/verify", #"{"code":"00000000"}"#, from: "192.0.2.9")
        #expect(json.status == 400)
    }
}
