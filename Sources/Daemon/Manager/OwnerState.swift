// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
public import ENCore
import Storage

/// What the owner decided and recorded, in `<data-dir>/owner.json` (atomic, 0600): consent,
/// on/off, a key pre-authorization, and test results.
struct OwnerState: Sendable, Equatable {
    enum Authorization: String, Sendable {
        case unknown
        case notAuthorized = "not-authorized"
        case authorized
    }

    var authorization = Authorization.unknown
    var enabled = false
    var preAuthorizedAt: UnixTime?
    var testResults: [TestResult] = []
    /// The key server's token for revising this device's keys (kept from the last publish).
    var revisionToken: String?

    static let fileName = "owner.json"

    static func load(from directory: DataDirectory) throws(ManagerError) -> OwnerState {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(directory.path(of: fileName), limit: 1 << 20)
        } catch {
            throw .internal("reading \(fileName): \(error)")
        }
        guard let bytes else { return OwnerState() }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw .internal("\(directory.path(of: fileName)) is not a JSON object; move it aside to start afresh")
        }
        var state = OwnerState()
        state.authorization = (object["authorization"] as? String).flatMap(Authorization.init(rawValue:)) ?? .unknown
        state.enabled = object["enabled"] as? Bool ?? false
        // A damaged file may hold any integer: a time past UnixTime's range reads as absent.
        state.preAuthorizedAt = (object["pre_authorized_at"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) }
        state.revisionToken = object["revision_token"] as? String
        state.testResults = (object["test_results"] as? [[String: Any]] ?? []).compactMap(TestResult.init(json:))
        return state
    }

    func save(to directory: DataDirectory) throws(ManagerError) {
        var object: [String: Any] = [
            "authorization": authorization.rawValue, "enabled": enabled, "test_results": testResults.map(\.json),
        ]
        if let preAuthorizedAt { object["pre_authorized_at"] = preAuthorizedAt.seconds }
        if let revisionToken { object["revision_token"] = revisionToken }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            _ = try directory.prepare()
            try AtomicFile.write(Array(data), to: directory.path(of: Self.fileName))
        } catch {
            throw .internal("storing \(Self.fileName): \(error)")
        }
    }
}

/// A test result the owner recorded (AddTestResult).
public struct TestResult: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case confirmed, likely, negative
        case selfReported = "self-reported"
    }

    public var id: String
    public var testDate: UnixTime
    public var kind: Kind
    public var symptomOnset: UnixTime?
    public var added: UnixTime
    public var shared: Bool

    init?(json: [String: Any]) {
        // Times past UnixTime's range are treated as a wrong type is: the record (or the onset) is unreadable.
        guard let id = json["id"] as? String, let testDate = (json["test_date"] as? Int64).flatMap({ UnixTime(exactlySeconds: $0) }),
            let kind = (json["type"] as? String).flatMap(Kind.init(rawValue:)), let added = (json["added"] as? Int64).flatMap({ UnixTime(exactlySeconds: $0) })
        else { return nil }
        self.init(
            id: id, testDate: testDate, kind: kind, symptomOnset: (json["symptom_onset"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) },
            added: added, shared: json["shared"] as? Bool ?? false)
    }

    init(id: String, testDate: UnixTime, kind: Kind, symptomOnset: UnixTime?, added: UnixTime, shared: Bool) {
        self.id = id
        self.testDate = testDate
        self.kind = kind
        self.symptomOnset = symptomOnset
        self.added = added
        self.shared = shared
    }

    var json: [String: Any] {
        var object: [String: Any] = ["id": id, "test_date": testDate.seconds, "type": kind.rawValue, "added": added.seconds, "shared": shared]
        if let symptomOnset { object["symptom_onset"] = symptomOnset.seconds }
        return object
    }
}
