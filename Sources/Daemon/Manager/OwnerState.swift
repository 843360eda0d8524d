// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
package import ENCore
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
    /// Test results kept: more than a person is tested in the key history's 14 days many times
    /// over; past it AddTestResult is refused with an error that says so.
    static let maximumTestResults = 100
    /// The key server's revision token is opaque; the reference server's are a few hundred bytes.
    static let maximumRevisionTokenBytes = 4096
    /// The file's size limit, the same for writing and reading: a full state (100 results, the
    /// longest token) is about 20 KB, so a file the daemon wrote always reads back.
    static let maximumFileBytes = 64 << 10

    /// What loading found: the state, and what was wrong with the file, if anything.
    struct Loaded {
        var state: OwnerState
        var problem: String?
    }

    /// Reads the state. A file that does not read back never stops the daemon: it is moved to
    /// `owner.json.damaged` (replacing an older one) and the daemon starts as on a new device,
    /// with the problem reported.
    static func load(from directory: DataDirectory) -> Loaded {
        let path = directory.path(of: fileName)
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: maximumFileBytes)
        } catch {
            return aside(path, "\(error)")
        }
        guard let bytes else { return Loaded(state: OwnerState()) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            return aside(path, "it is not a JSON object")
        }
        var state = OwnerState()
        state.authorization = (object["authorization"] as? String).flatMap(Authorization.init(rawValue:)) ?? .unknown
        state.enabled = object["enabled"] as? Bool ?? false
        // A damaged file may hold any integer: a time past UnixTime's range reads as absent.
        state.preAuthorizedAt = (object["pre_authorized_at"] as? Int64).flatMap { UnixTime(exactlySeconds: $0) }
        state.revisionToken = (object["revision_token"] as? String).flatMap { $0.utf8.count <= maximumRevisionTokenBytes ? $0 : nil }
        // The newest results, should the file hold more than the daemon writes.
        state.testResults = Array((object["test_results"] as? [[String: Any]] ?? []).compactMap(TestResult.init(json:)).suffix(maximumTestResults))
        return Loaded(state: state)
    }

    private static func aside(_ path: String, _ reason: String) -> Loaded {
        let damaged = path + ".damaged"
        let moved = (try? AtomicFile.move(path, to: damaged)) != nil
        return Loaded(
            state: OwnerState(),
            problem: "\(path) does not read back (\(reason)); \(moved ? "moved to \(damaged)" : "could not be moved aside"), starting as a new device")
    }

    func save(to directory: DataDirectory) throws(ManagerError) {
        var object: [String: Any] = [
            "authorization": authorization.rawValue, "enabled": enabled, "test_results": testResults.map(\.json),
        ]
        if let preAuthorizedAt { object["pre_authorized_at"] = preAuthorizedAt.seconds }
        if let revisionToken { object["revision_token"] = revisionToken }
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        } catch {
            throw .internal("storing \(Self.fileName): \(error)")
        }
        // Never write what would not read back.
        guard data.count <= Self.maximumFileBytes else {
            throw .internal("storing \(Self.fileName): \(data.count) bytes, over its \(Self.maximumFileBytes)-byte limit")
        }
        do {
            _ = try directory.prepare()
            try AtomicFile.write(Array(data), to: directory.path(of: Self.fileName))
        } catch {
            throw .internal("storing \(Self.fileName): \(error)")
        }
    }
}

/// A test result the owner recorded (AddTestResult).
package struct TestResult: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case confirmed, likely, negative
        case selfReported = "self-reported"
    }

    package var id: String
    package var testDate: UnixTime
    package var kind: Kind
    package var symptomOnset: UnixTime?
    package var added: UnixTime
    package var shared: Bool

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
