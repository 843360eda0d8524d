// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// The wearer who met the most people, on the smallest Pi: the release gaend in a memory cgroup of
/// the unit's limits detects an exposure in a crowded fortnight (2.5 M aggregates, 1.4 M keys in
/// two signed files). Before matching read the log from disk (issue 35), the index held every
/// record and the kernel killed gaend during this detection, at every restart. Then the same
/// detection again while user nobody sends gaend 32 MB messages, as any local user may (issue 53:
/// under 128M the kernel killed gaend mid-run).
@Suite(.ownThreads) struct BusyDetectionMemoryTests {
    /// `MemoryHigh=` and `MemoryMax=` of the shipped unit, bytes.
    static func unitLimits() throws -> (high: Int, max: Int) {
        let unit = try String(contentsOfFile: BumbleFixture.root.appendingPathComponent("systemd/gaend.service").path, encoding: .utf8)
        func value(_ key: String) throws -> Int {
            let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix(key + "=") })
            let text = line.dropFirst(key.count + 1)
            let number = try #require(Int(text.dropLast()))
            #expect(text.last == "M", "\(line)")
            return number << 20
        }
        return (try value("MemoryHigh"), try value("MemoryMax"))
    }

    /// Run as nobody with dbus-python: `count` calls of Properties.Get, each carrying a `size`-byte
    /// array after its arguments (refused, InvalidArgs, but read whole first); prints how many
    /// were refused.
    static let largeGets = """
        import sys, dbus, dbus.lowlevel
        address, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        bus = dbus.bus.BusConnection(address)
        payload = dbus.ByteArray(b"\\x5a" * size)
        refused = 0
        for _ in range(count):
            call = dbus.lowlevel.MethodCallMessage("org.gaend", "/org/gaend/Manager", "org.freedesktop.DBus.Properties", "Get")
            call.append("org.gaend.Manager1", "Status", payload, signature="ssay")
            try:
                bus.send_message_with_reply_and_block(call, 60)
            except dbus.exceptions.DBusException as error:
                refused += error.get_dbus_name() == "org.freedesktop.DBus.Error.InvalidArgs"
        print(refused)
        """

    @Test func aCrowdedFortnightIsDetectedUnderTheUnitsMemoryLimit() async throws {
        guard ProcessInfo.processInfo.environment["GAEND_PRODUCTS_DIR"] != nil, !BuildUnderTest.isSanitized else {
            print("skipped: memory figures are for the release binaries (GAEND_PRODUCTS_DIR), not a debug or sanitized build")
            return
        }
        let directory = try TemporaryDirectory()
        let limits = try Self.unitLimits()
        guard let cgroup = MemoryCgroup(name: "gaend-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", limitBytes: limits.max, highBytes: limits.high)
        else {
            print("skipped: no memory cgroup can be made here (needs root and cgroup v1's or v2's memory controller)")
            return
        }
        defer { cgroup.remove() }

        // Another size by hand, e.g. the largest log the window cap allows with the default
        // schedule: GAEND_BUSY_FIXTURE="--aggregates 28280000 --distinct-rpis 28280000 --per-window 5000".
        let size = ProcessInfo.processInfo.environment["GAEND_BUSY_FIXTURE"].map { $0.split(separator: " ").map(String.init) }
        let fixture = try ToolRunner.run("gaen-bench", ["busy-fixture", "--out", directory.path] + (size ?? []), limit: 300)
        #expect(fixture.status == 0, "\(fixture.standardError)")
        let lines = fixture.standardOutput.split(separator: "\n").map(String.init)
        let day = try #require(lines.first?.split(separator: " ").last.map(String.init))
        let files = lines.dropFirst()
        #expect(files.count == 2)
        let server = try HTTPFixture()
        var routes = ["/index.txt": HTTPFixture.Route.text(files.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: "\n"))]
        for file in files {
            routes["/" + URL(fileURLWithPath: file).lastPathComponent] = HTTPFixture.Route(
                body: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        }
        try await server.set(routes)

        // gaend is moved into the group by the shell that then becomes it; on a bus with the
        // shipped policy, which lets any user call Properties.Get.
        let bus = try AuthorizationTests.systemLikeBus(group: "users")
        let harness = try ManagerHarness(
            bus: bus, directory: directory, launcher: ["/bin/sh", "-c", "echo $$ > \(cgroup.procs) && exec \"$0\" \"$@\""],
            ["--radio", "none", "--index-url", server.baseURL + "/index.txt", "--export-key", "310:v1:\(directory.path)/export.pem", "--enable", "true"])
        defer { _ = harness.stop() }
        let members = (try? String(contentsOfFile: cgroup.procs, encoding: .utf8)) ?? ""
        #expect(members.split(separator: "\n").contains("\(harness.daemon.processIdentifier)"), "gaend is not in \(cgroup.path)")

        let idle = Self.highWater(of: harness.daemon.processIdentifier)
        let started = ContinuousClock.now
        let detected = try harness.ctl(["detect"])
        let took = ContinuousClock.now - started
        #expect(detected.status == 0, "\(detected.standardError)\n\(harness.stderr.suffix(2000))")
        #expect(detected.standardOutput.contains("files: 2, keys: 1400000, matched keys: 1"), "\(detected.standardOutput)")
        #expect(detected.standardOutput.contains("exposure on \(day)"), "\(detected.standardOutput)")
        #expect(harness.daemon.isRunning)
        #expect(cgroup.oomKills == 0)
        #expect(try harness.status()["exposure_days"] as? [String] == [day])
        let peak = cgroup.peakBytes ?? 0
        let highWater = Self.highWater(of: harness.daemon.processIdentifier)
        print(
            "gaend detected the busy fortnight in a \(limits.max >> 20) MiB cgroup in \(took): VmHWM \(idle / 1024) MiB before, \(highWater / 1024) MiB after; "
                + "cgroup peak \(peak >> 20) MiB (page cache included)")
        // Issue 35's goal for this case: 64 MiB at the peak, gaend's idle 40 MiB included.
        if size == nil { #expect(highWater <= 64 * 1024, "VmHWM \(highWater) kB") }

        // What the owner asks next: what was heard in the 14 days (GetHeard reads the whole log).
        let heard = try harness.ctl(["heard", "--since", "14d", "--json"])
        #expect(heard.status == 0, "\(heard.standardError)")
        let summary = try JSONSerialization.jsonObject(with: Data(heard.standardOutput.utf8)) as? [String: Any]
        if size == nil {
            // 14 days back from now: all but the first day's hours before this time of day.
            #expect((summary?["sightings"] as? Int ?? 0) > 2_300_000, "\(heard.standardOutput.prefix(300))")
            // About 100,000 synthetic RPIs (and the planted key's few), estimated past 1,024.
            let distinct = summary?["distinct_rpis"] as? Int ?? 0
            #expect(abs(distinct - 100_000) < 3_000, "\(distinct)")
        }
        #expect(harness.daemon.isRunning)
        #expect(cgroup.oomKills == 0)
        let afterHeard = Self.highWater(of: harness.daemon.processIdentifier)
        print("gaend after GetHeard over the 14 days: VmHWM \(afterHeard / 1024) MiB")
        if size == nil { #expect(afterHeard <= 80 * 1024, "VmHWM \(afterHeard) kB") }

        // The same detection again (the files and results forgotten, the log kept), while user
        // nobody sends 32 MB messages from four connections, 3 each: one read and one held at a
        // time is the most libdbus keeps (DBusLimits), so a dozen show the peak; 64 (the issue's)
        // moved 2 GB through the bus and starved the suites running beside this one.
        guard let python = BlueZMockFixture.python else {
            print("skipped the large messages: no dbusmock venv (make test-peers)")
            return
        }
        #expect(harness.stop() == .success)
        for name in ["processed-key-files", "exposure-results.json"] { try? FileManager.default.removeItem(atPath: directory.path + "/data/" + name) }
        try harness.start()
        let senders = try (0..<4).map { _ in
            let sender = Process()
            sender.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            sender.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", Self.largeGets, bus.address, "3", "32000000"]
            let output = Pipe()
            sender.standardOutput = output
            sender.standardError = FileHandle.nullDevice
            try sender.run()
            return (sender, output)
        }
        let attacked = try harness.ctl(["detect"])
        var refused = 0
        for (sender, output) in senders {
            _ = sender.waitForExit()
            refused +=
                Int(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        let attackedPeak = cgroup.peakBytes ?? 0
        let attackedHighWater = Self.highWater(of: harness.daemon.processIdentifier)
        print(
            "gaend detected again while nobody sent \(refused) refused 32 MB Gets: VmHWM \(attackedHighWater / 1024) MiB, cgroup peak "
                + "\(attackedPeak >> 20) MiB; the unit's MemoryHigh \(limits.high >> 20) MiB, MemoryMax \(limits.max >> 20) MiB")
        #expect(attacked.status == 0, "\(attacked.standardError)\n\(harness.stderr.suffix(2000))")
        #expect(attacked.standardOutput.contains("files: 2, keys: 1400000, matched keys: 1"), "\(attacked.standardOutput)")
        #expect(refused == 12)
        #expect(harness.daemon.isRunning)
        #expect(cgroup.oomKills == 0)
        #expect(attackedHighWater * 1024 < limits.high, "VmHWM \(attackedHighWater) kB against MemoryHigh \(limits.high) bytes")
    }

    /// VmHWM of a process, kB (0 when it cannot be read).
    static func highWater(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }
}
