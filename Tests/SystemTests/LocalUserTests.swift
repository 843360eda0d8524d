// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import ENCore
import Foundation
import GaendTestSupport
import Glibc
import KeySchedule
import Logging
import Storage
import Testing
import SystemCalls

/// What another local user can get from gaend, and what gaend keeps of who did what: keys reach
/// the caller alone, every key release, share, reset, switch and test result leaves an audit line
/// with the caller's uid, polkit is started when it is only activatable, and the owner's file can
/// neither grow past what reads back nor stop the daemon.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct LocalUserTests {
    @Test func preAuthorizedKeysReachTheCallerAloneAndEveryActionIsAudited() async throws {
        let bus = try AuthorizationTests.systemLikeBus(group: "users")
        // Yesterday's and today's keys, as a beacon that advertised would have (radio none makes none).
        let directory = try TemporaryDirectory()
        let yesterday = ManualClock(SystemWallClock().now().adding(seconds: -86_400))
        let schedule = try KeySchedule(
            dataDirectory: DataDirectory(path: directory.path + "/data"), clock: yesterday,
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        _ = try await schedule.currentKey()
        yesterday.advance(seconds: 86_400)
        _ = try await schedule.currentKey()
        let harness = try ManagerHarness(bus: bus, directory: directory, ["--radio", "none", "--enable", "true", "--owner-group", "users"])
        let output = harness.directory.path + "/nobody-watch.out"
        // A signal receiver of another uid in the owner's group (others receive no signal of
        // gaend's at all under the shipped policy): it sees the broadcasts, never another's keys.
        let watcher = try ManagerDaemonTests.startWatch(harness, output: output, count: nil, user: ["--reuid=65534", "--regid=65534", "--groups=100"])
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }

        #expect(try harness.ctl(["preauthorize"]).status == 0)
        let released = try harness.ctl(["preauthorize", "--request", "--json"])
        #expect(released.status == 0, "\(released.standardError)")
        let keys = try JSONSerialization.jsonObject(with: Data(released.standardOutput.utf8)) as? [[String: Any]] ?? []
        #expect(!keys.isEmpty, "\(released.standardOutput)")
        // A member of the group switches gaend off: a broadcast every receiver sees, after the keys.
        #expect(try AuthorizationTests.asNobody(harness, group: "100", ["disable"]).status == 0)
        try await eventually("the watch to see the switch") { (try? String(contentsOfFile: output, encoding: .utf8))?.contains(#""enabled":false"#) == true }
        let watched = try String(contentsOfFile: output, encoding: .utf8)
        #expect(!watched.contains("DiagnosisKeysAvailable"), "\(watched)")
        for key in keys { #expect(!watched.contains(key["key"] as? String ?? "-"), "a key reached nobody") }

        // The audit trail: one notice line each, with the uid the bus vouches for, never a key.
        let log = harness.stderr
        let audit = log.split(separator: "\n").filter { $0.contains("gaend.audit") }
        #expect(audit.contains { $0.contains("key release pre-authorized") && $0.contains("uid=0") && $0.contains("outcome=done") }, "\(log)")
        #expect(audit.contains { $0.contains("key release (RequestPreAuthorizedDiagnosisKeys)") && $0.contains("keys=\(keys.count)") }, "\(log)")
        #expect(audit.contains { $0.contains("disable") && $0.contains("uid=65534") }, "\(log)")
        #expect(audit.allSatisfy { $0.contains("notice") })
        for key in keys { #expect(!log.contains(key["key"] as? String ?? "-"), "a key in the log") }
        harness.stop()
    }

    /// polkit that is activatable but not running is started by the question, not skipped.
    @Test func polkitIsStartedOnDemand() async throws {
        guard let python = BlueZMockFixture.python else { throw ToolRunnerError(message: "no dbusmock venv: run make test-peers") }
        let services = try TemporaryDirectory()
        _ = chmod(services.path, 0o755)
        try """
        [D-BUS Service]
        Name=org.freedesktop.PolicyKit1
        Exec=/bin/sh -c 'DBUS_SYSTEM_BUS_ADDRESS="$DBUS_STARTER_ADDRESS" exec \(python) -m dbusmock --system -t polkitd'
        """.write(toFile: services.path + "/org.freedesktop.PolicyKit1.service", atomically: true, encoding: .utf8)
        let configuration = DBusDaemonFixture.allowAll.replacingOccurrences(
            of: "<policy context=\"default\">", with: "<servicedir>\(services.path)</servicedir>\n  <policy context=\"default\">")
        let bus = try DBusDaemonFixture(configuration: configuration, keeping: services)
        let harness = try ManagerHarness(bus: bus, ["--radio", "none", "--enable", "true"])
        let control = try await DBusConnection.bus(address: bus.address)
        func polkitPID() async -> UInt32? {
            try? await control.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetConnectionUnixProcessID", [.string("org.freedesktop.PolicyKit1")]
            ).first?.uint32
        }
        #expect(await polkitPID() == nil)
        // Root would be let through without polkit; the started polkit (which allows nothing) refuses.
        let refused = try harness.ctl(["keys"])
        #expect(refused.status == 4, "\(refused.standardOutput)\(refused.standardError)")
        #expect(refused.standardError.contains("polkit refused org.gaend.release-keys"), "\(refused.standardError)")
        let pid = await polkitPID()
        #expect(pid != nil)
        if let pid { kill(pid_t(pid), SIGKILL) }
        harness.stop()
    }

    /// Test results are capped, and an owner file that does not read back is moved aside at start.
    @Test func testResultsAreCappedAndADamagedOwnerFileNeverStopsTheDaemon() throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let now = Int64(Date().timeIntervalSince1970)
        let results = (0..<100).map { #"{"id":"t\#($0)","test_date":\#(now),"type":"negative","added":\#(now),"shared":false}"# }
        try #"{"authorization":"authorized","enabled":false,"test_results":[\#(results.joined(separator: ","))]}"#.write(
            toFile: data + "/owner.json", atomically: true, encoding: .utf8)
        let harness = try ManagerHarness(directory: directory, ["--radio", "none"])
        let today = String(Output.time(UInt64(now)).prefix(10))
        let refused = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("100 test results are recorded, the most gaend keeps"), "\(refused.standardError)")
        harness.stop()

        // A file past the limit (as 10,293 results once made it) is moved aside; gaend starts. So is
        // a key history that is not one (its copy kept byte for byte).
        try "not a key history".write(toFile: data + "/tek-history", atomically: true, encoding: .utf8)
        let many = String(repeating: #"{"id":"x","test_date":1,"type":"negative","added":1,"shared":false},"#, count: 2000)
        try #"{"authorization":"authorized","test_results":[\#(many){}]}"#.write(toFile: data + "/owner.json", atomically: true, encoding: .utf8)
        try harness.start()
        #expect(try harness.status()["authorization_status"] as? String == "unknown")
        #expect(FileManager.default.fileExists(atPath: data + "/owner.json.damaged"))
        #expect(harness.stderr.contains("owner.json.damaged"), "\(harness.stderr)")
        let asideHistory = try FileManager.default.contentsOfDirectory(atPath: data).filter { $0.hasPrefix("tek-history.unreadable-") }
        #expect(asideHistory.count == 1)
        #expect(try asideHistory.first.map { try String(contentsOfFile: data + "/" + $0, encoding: .utf8) } == "not a key history")
        #expect(try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed"]).status == 0)
        harness.stop()
    }
}
