// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// `POST /v1/publish` as the reference server reads it (pkg/api/v1/exposure_types.go). Parsing
/// checks shapes only; `PublishValidator` applies the rules.
package struct PublishRequest: Sendable, Equatable {
    package struct Key: Sendable, Equatable {
        /// As sent (base64): the HMAC covers this string, not the decoded bytes.
        package var key: String
        package var rollingStartNumber: Int64
        /// 0 when absent, as the reference's int32 field: such a key is invalid.
        package var rollingPeriod: Int64
        /// 0 when absent.
        package var transmissionRisk: Int64
    }

    package var keys: [Key]
    package var healthAuthorityID: String
    package var verificationPayload: String?
    package var hmacKey: String?
    package var symptomOnsetInterval: Int64?
    package var traveler: Bool
    package var revisionToken: String?

    /// The largest body accepted, as the reference server's limit (internal/jsonutil/unmarshal.go:
    /// 64,000 bytes).
    package static let maximumBodyBytes = 64_000

    package init(json body: [UInt8]) throws(PublishError) {
        guard body.count <= Self.maximumBodyBytes else { throw PublishError(.badRequest, "the body is larger than 64,000 bytes") }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(body))
        } catch {
            throw PublishError(.badRequest, "the body is not JSON")
        }
        guard let object = parsed as? [String: Any] else { throw PublishError(.badRequest, "the body is not a JSON object") }
        let known: Set = [
            "temporaryExposureKeys", "healthAuthorityID", "verificationPayload", "hmacKey", "symptomOnsetInterval", "traveler", "revisionToken",
            "padding",
        ]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw PublishError(.badRequest, "unknown field \(unknown)")
        }
        func string(_ name: String) throws(PublishError) -> String? {
            guard let value = object[name] else { return nil }
            guard let text = value as? String else { throw PublishError(.badRequest, "\(name) is not a string") }
            return text
        }
        func integer(_ value: Any?, _ name: String) throws(PublishError) -> Int64? {
            guard let value else { return nil }
            // JSONSerialization gives NSNumber; a bool (objCType "c") or a fraction is not an integer here.
            guard let number = value as? NSNumber, !Self.isBoolean(number), number.doubleValue == number.doubleValue.rounded(),
                abs(number.doubleValue) < 1e15
            else { throw PublishError(.badRequest, "\(name) is not an integer") }
            return number.int64Value
        }
        guard let keyList = object["temporaryExposureKeys"] as? [Any] else {
            throw PublishError(.badRequest, "temporaryExposureKeys is missing or not an array")
        }
        var keys = [Key]()
        for (index, entry) in keyList.enumerated() {
            guard let fields = entry as? [String: Any] else { throw PublishError(.badRequest, "temporaryExposureKeys[\(index)] is not an object") }
            if let unknown = fields.keys.sorted().first(where: { !["key", "rollingStartNumber", "rollingPeriod", "transmissionRisk"].contains($0) }) {
                throw PublishError(.badRequest, "temporaryExposureKeys[\(index)]: unknown field \(unknown)")
            }
            guard let key = fields["key"] as? String else { throw PublishError(.badRequest, "temporaryExposureKeys[\(index)].key is missing") }
            guard let start = try integer(fields["rollingStartNumber"], "temporaryExposureKeys[\(index)].rollingStartNumber") else {
                throw PublishError(.badRequest, "temporaryExposureKeys[\(index)].rollingStartNumber is missing")
            }
            keys.append(
                Key(
                    key: key, rollingStartNumber: start,
                    rollingPeriod: try integer(fields["rollingPeriod"], "temporaryExposureKeys[\(index)].rollingPeriod") ?? 0,
                    transmissionRisk: try integer(fields["transmissionRisk"], "temporaryExposureKeys[\(index)].transmissionRisk") ?? 0))
        }
        self.keys = keys
        guard let authority = try string("healthAuthorityID"), !authority.isEmpty else {
            throw PublishError(.unknownHealthAuthorityID, "healthAuthorityID is missing")
        }
        healthAuthorityID = authority
        verificationPayload = try string("verificationPayload")
        hmacKey = try string("hmacKey")
        symptomOnsetInterval = try integer(object["symptomOnsetInterval"], "symptomOnsetInterval")
        if let value = object["traveler"] {
            guard let number = value as? NSNumber, Self.isBoolean(number) else { throw PublishError(.badRequest, "traveler is not a boolean") }
            traveler = number.boolValue
        } else {
            traveler = false
        }
        revisionToken = try string("revisionToken")
    }

    /// JSON true and false arrive as NSNumber of type "c"; numbers never do.
    static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }
}
