// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Storage
import Testing
import SystemCalls

/// gaend's Manager1 driven by gaenctl on a private bus, against a scripted key and verification
/// server on loopback: every command, human and JSON output, signals, errors and exit codes.
@Suite(.ownThreads, .timeLimit(.minutes(4)))
struct ManagerDaemonTests {
    /// A key server: index.txt and one signed export of keys that match nothing here.
    static func keyServer(in directory: TemporaryDirectory) async throws -> (HTTPFixture, pem: String) {
        let server = try HTTPFixture()
        let signing = try ECDSAPrivateKey()
        let today = ENIntervalNumber(containing: SystemWallClock().now())!.rollingStart
        let keys = (0..<50).map { index in
            DiagnosisKey(
                key: try! TemporaryExposureKey(keyData: Bytes16(words: (UInt64(index) &* 7919, 42)), rollingStartIntervalNumber: today.advanced(by: -144)),
                transmissionRiskLevel: 2, reportType: .confirmedTest)
        }
        let zip = try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(
            KeyExport(startTimestamp: 1, endTimestamp: 2, region: "CH", keys: keys))
        try await server.set([
            // The reference layout: the index lists paths that start with its own folder.
            "/exports/index.txt": .text("exports/1.zip\n"),
            "/exports/1.zip": HTTPFixture.Route(body: zip),
        ])
        let pem = "\(directory.path)/export-key.pem"
        try signing.publicKeyPEM.write(toFile: pem, atomically: true, encoding: .utf8)
        return (server, pem)
    }

    @Test func everyCommandAgainstTheDaemon() async throws {
        let files = try TemporaryDirectory()
        let (server, pem) = try await Self.keyServer(in: files)
        let config = "\(files.path)/gaend.conf"
        try "region = CH\ntest-mode = true\n".write(toFile: config, atomically: true, encoding: .utf8)
        let harness = try ManagerHarness([
            "--config", config, "--radio", "none", "--index-url", server.baseURL + "/exports/index.txt", "--export-key", "310:v1:\(pem)",
            "--verification-url", server.baseURL, "--verification-api-key", "device-key", "--publish-url", server.baseURL + "/v1/publish",
            "--health-authority-id", "ch.example",
        ])

        // status: human and JSON.
        let status = try harness.ctl(["status"])
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("\tStatus: paused"))
        #expect(status.standardOutput.contains("\tStatusReason: no radio is configured (radio = none): detection only"))
        #expect(status.standardOutput.contains("\tAuthorizationStatus: unknown"))
        #expect(status.standardOutput.contains("\tRegion: CH"))
        #expect(status.standardOutput.contains("\tLastDetectionTime: never"))
        let properties = try harness.status()
        #expect(Set(properties.keys) == Set(StatusCommandOrder.names))
        try SchemaCheck.expect(try harness.ctl(["status", "--json"]).standardOutput, matches: "status")
        #expect(properties["detections_remaining"] as? Int == 6)
        // Real types: never is null, not 0; an empty text is null, not "".
        #expect(properties["last_detection_time"] is NSNull)
        #expect(properties["last_detection_error"] is NSNull)
        #expect(properties["status"] as? String == "paused")

        // Global options before the command, as with systemctl and busctl; get prints a value alone.
        let first = try ToolRunner.run("gaenctl", ["--bus", harness.bus.address, "--json", "status"])
        #expect(first.status == 0)
        #expect((try? JSONSerialization.jsonObject(with: Data(first.standardOutput.utf8)) as? [String: Any])?["region"] as? String == "CH")
        #expect(try ToolRunner.run("gaenctl", ["--bus=\(harness.bus.address)", "get", "region"]).standardOutput == "CH\n")
        #expect(try harness.ctl(["get", "LastDetectionTime"]).standardOutput == "never\n")
        #expect(try harness.ctl(["get", "DetectionsRemaining", "--json"]).standardOutput == #"{"detections_remaining":6}"# + "\n")
        let noSuchProperty = try harness.ctl(["get", "Colour"])
        #expect(noSuchProperty.status == 2)
        #expect(noSuchProperty.standardError.contains("no property 'Colour'; gaend has Status, "))

        // watch sees the property changes enable causes.
        let watchOutput = "\(files.path)/watch.out"
        let watch = try Self.startWatch(harness, output: watchOutput, count: 1)
        #expect(try harness.ctl(["enable"]).standardOutput == "Exposure Notification enabled\n")
        watch.waitForExit()
        let watched = try String(contentsOfFile: watchOutput, encoding: .utf8)
        for line in watched.split(separator: "\n") { try SchemaCheck.expect(String(line), matches: "watch") }
        #expect(watched.contains(#""signal":"PropertiesChanged""#))
        #expect(watched.contains(#""changed":{"#))
        #expect(watched.contains(#""enabled":true"#))
        #expect(try harness.status()["authorization_status"] as? String == "authorized")
        #expect(try harness.ctl(["disable", "--json"]).standardOutput == #"{"enabled":false}"# + "\n")
        #expect(try harness.status()["enabled"] as? Bool == false)
        #expect(try harness.status()["authorization_status"] as? String == "authorized")
        _ = try harness.ctl(["enable"])

        // Keys: the test keys include the current key whole; the release cuts it.
        let testKeys = try harness.json(["keys", "--test"]) as? [[String: Any]] ?? []
        #expect(testKeys.count == 1)
        #expect((testKeys.first?["key"] as? String)?.count == 32)
        #expect(testKeys.first?["rolling_period"] as? Int == 144)
        let released = try harness.json(["keys"]) as? [[String: Any]] ?? []
        #expect(released.allSatisfy { ($0["rolling_period"] as? Int ?? 144) < 144 })
        let human = try harness.ctl(["keys"]).standardOutput
        #expect(human.contains("rolling start"))
        #expect(human.contains("Today's key was cut short at ") && human.contains("a new key has replaced it on the air since then"))
        #expect(!(try harness.ctl(["keys", "--test"]).standardOutput.contains("cut short")))

        // Pre-authorization: one release, then none.
        #expect(try harness.ctl(["preauthorize"]).status == 0)
        let preauthorized = try harness.ctl(["preauthorize", "--request", "--json"])
        #expect(preauthorized.status == 0, "\(preauthorized.standardError)")
        #expect((try? JSONSerialization.jsonObject(with: Data(preauthorized.standardOutput.utf8))) is [Any])
        let again = try harness.ctl(["preauthorize", "--request"])
        #expect(again.status == 4)
        #expect(again.standardError.contains("no key release was pre-authorized"))

        // Test results.
        let today = String(Output.time(UInt64(SystemWallClock().now().seconds)).prefix(10))
        let added = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed", "--symptom-onset", today])
        #expect(added.status == 0, "\(added.standardError)")
        let id = added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try harness.ctl(["test-result", "list"]).standardOutput.contains("\(id)  confirmed test of \(today)"))
        #expect(try harness.ctl(["test-result", "add", "--date", today, "--type", "maybe"]).status == 2)
        #expect(try harness.ctl(["test-result", "add", "--date", "2026-02-30", "--type", "confirmed"]).status == 2)
        let old = try harness.ctl(["test-result", "add", "--date", "2001-01-01", "--type", "confirmed"])
        #expect(old.status == 1)
        #expect(old.standardError.contains("BadParameter: TestDate"))

        // Detection: the export is downloaded and verified; progress and the end are signalled.
        let detectWatch = try Self.startWatch(harness, output: "\(files.path)/detect-watch.out", count: nil)
        let detected = try harness.ctl(["detect", "--json"])
        #expect(detected.status == 0, "\(detected.standardOutput)\(detected.standardError)\ngaend said:\n\(harness.stderr.suffix(3000))")
        try SchemaCheck.expect(detected.standardOutput, matches: "detection")
        let result = try JSONSerialization.jsonObject(with: Data(detected.standardOutput.utf8)) as? [String: Any]
        let resultFiles = result?["files"] as? [[String: Any]]
        #expect(resultFiles?.first?["verdict"] as? String == "verified")
        #expect((result?["statistics"] as? [String: Any])?["keys"] as? Int == 50)
        try await eventually("DetectionFinished in watch") {
            (try? String(contentsOfFile: "\(files.path)/detect-watch.out", encoding: .utf8))?.contains("DetectionFinished") == true
        }
        kill(detectWatch.processIdentifier, SIGTERM)
        detectWatch.waitForExit()
        let detectWatched = try String(contentsOfFile: "\(files.path)/detect-watch.out", encoding: .utf8)
        for line in detectWatched.split(separator: "\n") { try SchemaCheck.expect(String(line), matches: "watch") }
        #expect(detectWatched.contains(#""signal":"DetectionProgress""#))
        #expect(detectWatched.contains(#""arguments":[true,""]"#))
        #expect(try harness.status()["last_detection_time"] as? Int ?? 0 > 0)
        #expect(try harness.ctl(["detect"]).standardOutput.contains("files: 0, keys: 0, matched keys: 0"))  // already processed
        #expect(try harness.ctl(["exposures"]).standardOutput == "no exposure windows\n")
        #expect(try harness.ctl(["exposures", "--summaries", "--json"]).standardOutput == "[]\n")
        #expect(try harness.ctl(["exposures", "--windows", "--summaries"]).status == 2)
        // The budget: 6 runs in 24 hours, then RateLimited with the next allowed time.
        for _ in 0..<4 { #expect(try harness.ctl(["detect"]).status == 0) }
        let limited = try harness.ctl(["detect"])
        #expect(limited.status == 1)
        #expect(limited.standardError.contains("RateLimited:"))
        #expect(limited.standardError.contains("next="))
        #expect(try harness.status()["detections_remaining"] as? Int == 0)
        let badConfig = "\(files.path)/bad.json"
        try #"{"attenuationDurationThresholds": [50, 70, 90], "bogusKey": 1}"#.write(toFile: badConfig, atomically: true, encoding: .utf8)
        let refused = try harness.ctl(["exposures", "--summaries", "--config", badConfig])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("BadParameter: bogusKey"))

        // Sharing: verify, certificate, publish; a refused code names the server's error code.
        try await server.set([
            "/api/verify": .json(#"{"error":"verification code is invalid","errorCode":"code_invalid"}"#, status: 400)
        ])
        let refusedCode = try harness.ctl(["share", "--test-result", id, "--code", "00000000"])
        #expect(refusedCode.status == 1)
        #expect(refusedCode.standardError.contains("VerificationFailed"))
        #expect(refusedCode.standardError.contains("code_invalid"))
        try await server.set([
            "/api/verify": .json(#"{"testtype":"confirmed","symptomDate":"\#(today)","token":"TOKEN"}"#),
            "/api/certificate": .json(#"{"certificate":"CERT"}"#),
            "/v1/publish": .json(#"{"revisionToken":"REV","insertedExposures":2}"#),
        ])
        let shared = try harness.ctl(["share", "--test-result", id, "--code", "12345678"])
        #expect(shared.status == 0, "\(shared.standardError)")
        #expect(try harness.ctl(["test-result", "list"]).standardOutput.contains("shared"))
        try SchemaCheck.expect(try harness.ctl(["test-result", "list", "--json"]).standardOutput, matches: "test-results")
        try SchemaCheck.expect(try harness.ctl(["keys", "--test", "--json"]).standardOutput, matches: "keys")
        let publish = try await server.requests().last { $0.path == "/v1/publish" }
        let body = try JSONSerialization.jsonObject(with: publish?.body ?? Data()) as? [String: Any]
        #expect(body?["healthAuthorityID"] as? String == "ch.example")
        #expect(body?["verificationPayload"] as? String == "CERT")
        #expect((body?["temporaryExposureKeys"] as? [Any])?.isEmpty == false)
        let unknown = try harness.ctl(["share", "--test-result", "nope", "--code", "1"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("BadParameter: testResultId"))

        // config show --config and log stats read files, not the bus.
        let shown = try ToolRunner.run("gaenctl", ["config", "show", "--config", config])
        #expect(shown.standardOutput.contains("region = CH\n"))
        #expect(shown.standardOutput.contains("test-mode = true\n"))
        // In JSON with JSON's types: booleans, numbers, null for what is not set, arrays for repeatable keys.
        let shownJSON = try ToolRunner.run("gaenctl", ["config", "show", "--config", config, "--json"])
        let shownObject = try #require(try JSONSerialization.jsonObject(with: Data(shownJSON.standardOutput.utf8)) as? [String: Any])
        #expect(shownObject["file"] as? String == config)
        let object = try #require(shownObject["values"] as? [String: Any])
        #expect(object["test_mode"] as? Bool == true)
        #expect(object["detection_interval"] as? Int == 4)
        #expect(object["tx_power"] is NSNull)
        #expect(object["export_key"] as? [String] == [])
        #expect(object["region"] as? String == "CH")
        #expect(object["rotation_interval"] as? String == "600-1200")
        #expect(try ToolRunner.run("gaenctl", ["log", "stats", "--data-dir", "\(harness.directory.path)/data"]).status == 0)

        // SIGHUP reads the configuration again.
        try "region = DE\ntest-mode = true\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("the new region") { try harness.status()["region"] as? String == "DE" }

        // A second daemon is refused: the name is taken.
        let second = try ToolRunner.run("gaend", ["--radio", "none", "--bus", harness.bus.address, "--data-dir", "\(files.path)/second"])
        #expect(second.status == 1)
        #expect(second.standardError.contains("org.gaend is already owned on the bus: another gaend is running"))

        // Reset: refused without --yes off a terminal; then everything is gone.
        #expect(try harness.ctl(["reset"]).status == 2)
        #expect(try harness.ctl(["reset", "--yes"]).status == 0)
        #expect(try harness.status()["authorization_status"] as? String == "unknown")
        #expect(try harness.json(["test-result", "list"]) as? [Any] == nil || (try harness.json(["test-result", "list"]) as? [Any])?.isEmpty == true)

        // SIGTERM: exit 0 within the unit's 10 s (asserted on the build that ships, as in
        // DaemonTests); then gaenctl says the daemon is not there.
        let stopping = ContinuousClock.now
        #expect(harness.stop() == .success)
        #expect(BuildUnderTest.isSanitized || ContinuousClock.now - stopping < .seconds(10))
        let gone = try harness.ctl(["status"])
        #expect(gone.status == 3)
        #expect(gone.standardError.contains("gaend is not running on the bus at"))
    }

    /// `gaenctl watch --json` writing to `output`; returns once it is watching.
    /// `gaenctl watch --json` in the background; with `user`, run through setpriv with those
    /// arguments (`--reuid=65534 …`), as another local user.
    static func startWatch(_ harness: ManagerHarness, output: String, count: Int?, user: [String] = [], json: Bool = true) throws -> Process {
        let process = Process()
        let gaenctl = try ToolRunner.productsDirectory().appendingPathComponent("gaenctl")
        let watch = ["watch", "--bus", harness.bus.address] + (json ? ["--json"] : []) + (count.map { ["--count", "\($0)"] } ?? [])
        process.executableURL = user.isEmpty ? gaenctl : URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = user.isEmpty ? watch : user + [gaenctl.path] + watch
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        try process.run()
        try eventually("watch to start") { (try? String(contentsOfFile: output, encoding: .utf8))?.contains("watching") == true }
        return process
    }

    /// watch as a person reads it: each line stamped with the time (UTC), times as dates, and a
    /// line when gaend leaves the bus and when it is back; the watch itself goes on.
    @Test func watchStampsLinesAndSeesTheDaemonLeaveAndReturn() async throws {
        let harness = try ManagerHarness(["--radio", "none"])
        let files = try TemporaryDirectory()
        let output = "\(files.path)/watch.out"
        let watch = try Self.startWatch(harness, output: output, count: nil, json: false)
        defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
        func watched() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        _ = try harness.ctl(["enable"])
        try await eventually("the switch in watch", explain: { watched() }) { watched().contains("[CHG] Enabled: yes") }
        harness.stop()
        try await eventually("gaend leaving") { watched().contains("[BUS] gaend left ") }
        try harness.start()
        try await eventually("gaend returning") { watched().contains("[BUS] gaend is back on ") }
        #expect(watch.isRunning)
        let stamp = #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \["#
        for line in watched().split(separator: "\n").dropFirst() {
            #expect(String(line).range(of: stamp, options: .regularExpression) != nil, "\(line)")
        }
        kill(watch.processIdentifier, SIGTERM)
        watch.waitForExit()
    }

    @Test func garbageArgumentsAndVanishingClientsLeaveTheDaemonStanding() async throws {
        let files = try TemporaryDirectory()
        let (server, pem) = try await Self.keyServer(in: files)
        // The index is held until the test lets it go: a client can leave in the middle of
        // DetectExposures, and the run is still going when the next call comes, however slow the machine.
        try await server.set(["/exports/index.txt": HTTPFixture.Route(body: Array("exports/1.zip\n".utf8), held: true)])
        let harness = try ManagerHarness([
            "--radio", "none", "--index-url", server.baseURL + "/exports/index.txt", "--export-key", "310:v1:\(pem)", "--enable", "true",
        ])
        let client = try await DBusConnection.bus(address: harness.bus.address)
        let methods: [(String, [DBusValue])] = [
            ("SetEnabled", [.string("yes")]), ("GetDiagnosisKeys", [.int32(1)]), ("GetTestDiagnosisKeys", [.string("")]),
            ("PreAuthorizeDiagnosisKeys", [.boolean(true)]), ("RequestPreAuthorizedDiagnosisKeys", [.bytes([1])]), ("DetectExposures", [.int32(7)]),
            ("GetExposureWindows", [.string("x")]), ("GetDailySummaries", []), ("AddTestResult", [.string("x")]), ("GetTestResults", [.uint64(1)]),
            ("ShareDiagnosisKeys", [.string("only one")]), ("ResetAllData", [.structure([.byte(0)])]),
        ]
        for (method, arguments) in methods {
            await #expect {
                _ = try await client.call(destination: "org.gaend", path: "/org/gaend/Manager", interface: "org.gaend.Manager1", member: method, arguments)
            } throws: { ($0 as? DBusError)?.name == .invalidArgs }
        }
        func managerError(_ method: String, _ arguments: [DBusValue]) async -> DBusError? {
            do {
                _ = try await client.call(destination: "org.gaend", path: "/org/gaend/Manager", interface: "org.gaend.Manager1", member: method, arguments)
                return nil
            } catch {
                return error as? DBusError
            }
        }
        let bogus = await managerError("AddTestResult", [.properties(["TestDate": .uint64(1), "Type": .string("confirmed"), "Colour": .string("red")])])
        #expect(bogus?.name.rawValue == "org.gaend.Error.BadParameter")
        #expect(bogus?.message.contains("Colour") == true)
        let mistyped = await managerError("AddTestResult", [.properties(["TestDate": .string("today"), "Type": .string("confirmed")])])
        #expect(mistyped?.message.contains("TestDate") == true)
        let badJSON = await managerError("DetectExposures", [.string("{not json")])
        #expect(badJSON?.name.rawValue == "org.gaend.Error.BadParameter")
        #expect(await managerError("Nonexistent", [])?.name == .unknownMethod)
        #expect(await managerError("GetTestDiagnosisKeys", [])?.name.rawValue == "org.gaend.Error.NotSupported")

        // A client that leaves mid-call: the run goes on, the daemon stays.
        let detect = Process()
        detect.executableURL = try ToolRunner.productsDirectory().appendingPathComponent("gaenctl")
        detect.arguments = ["detect", "--bus", harness.bus.address]
        detect.standardOutput = FileHandle.nullDevice
        detect.standardError = FileHandle.nullDevice
        try detect.run()
        defer { if detect.isRunning { kill(detect.processIdentifier, SIGKILL) } }
        try await eventually("gaenctl detect's run to ask for the index") {
            try await server.requests().contains(where: { $0.path == "/exports/index.txt" })
        }
        kill(detect.processIdentifier, SIGKILL)
        detect.waitForExit()
        let busy = await managerError("DetectExposures", [.string("")])
        #expect(busy?.name.rawValue == "org.gaend.Error.InProgress")
        try await server.release("/exports/index.txt")
        try await eventually("the abandoned run to finish") { try harness.status()["last_detection_time"] as? Int ?? 0 > 0 }
        #expect(harness.daemon.isRunning)
        #expect(try harness.ctl(["status"]).status == 0)
        #expect(harness.stop() == .success)
    }
}

/// The members `gaenctl status --json` writes (Manager1's properties, snake_case), written out
/// here so that a property added or renamed shows up as a test change.
enum StatusCommandOrder {
    static let names = [
        "exposure_days", "last_exposure_time", "exposure_classification", "exposure_classification_name", "status", "status_reason", "clock_trusted",
        "clock_offset",
        "authorization_status", "enabled", "radio_backend", "advertising",
        "advertising_since", "address", "rpi_interval", "next_rotation", "last_scan_time", "sightings_today", "held_sightings", "key_server",
        "last_download_time",
        "last_detection_time", "last_detection_error", "detections_remaining", "next_detection_time", "region", "version",
    ]
}

/// Output.time's date form, for the tests.
enum Output {
    static func time(_ seconds: UInt64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
