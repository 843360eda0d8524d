// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Foundation
import GaendTestSupport
import Glibc
import Testing

/// Large messages from a caller of another user (issue 16, item 2), on a system-like bus with the
/// shipped policy: a 33 MB `ay` in a unicast signal to org.gaend (which nothing in gaend
/// subscribes to) and an 8 MB `ay` appended to Properties.Get (open to everyone). Before, the first
/// took gaend from 287 MB to 1.39 GB and held up a Get for 6.9 s; the second took 0.67 s to refuse.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct HostileDBusMessageTests {
    /// The sender, run as `nobody` with dbus-python (from the dbusmock venv): it writes `sent` to
    /// the marker file once the signal is on the bus, then times the oversized Get's refusal.
    static let sender = """
        import sys, time, dbus, dbus.lowlevel
        address, marker, signal_size, get_size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        bus = dbus.bus.BusConnection(address)
        signal = dbus.lowlevel.SignalMessage("/org/gaend/Manager", "org.gaend.Flood1", "Flood")
        signal.set_destination("org.gaend")
        signal.append(dbus.ByteArray(b"\\xa5" * signal_size), signature="ay")
        bus.send_message(signal)
        bus.flush()
        open(marker, "w").write("sent\\n")
        call = dbus.lowlevel.MethodCallMessage("org.gaend", "/org/gaend/Manager", "org.freedesktop.DBus.Properties", "Get")
        call.append("org.gaend.Manager1", "Status", dbus.ByteArray(b"\\x5a" * get_size), signature="ssay")
        start = time.monotonic()
        try:
            bus.send_message_with_reply_and_block(call, 30)
            print("answered")
        except dbus.exceptions.DBusException as error:
            print(error.get_dbus_name())
        print("%.6f" % (time.monotonic() - start))
        """

    /// VmHWM and VmRSS of `pid`, in kB.
    static func memory(of pid: Int32) throws -> (peak: Int, resident: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return (field("VmHWM"), field("VmRSS"))
    }

    /// CPU time `pid` has used (user and system), from /proc/PID/stat.
    static func cpuTime(of pid: Int32) throws -> Duration {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command name in parentheses: state is field 3, utime 14, stime 15.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        let ticks = (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        return .milliseconds(ticks * 1000 / sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test func largeByteArraysFromAnotherUserCostLittleMemoryAndDelayNothing() async throws {
        guard let python = BlueZMockFixture.python else { throw ToolRunnerError(message: "no dbusmock venv: run make test-peers") }
        let bus = try AuthorizationTests.systemLikeBus(group: "users")
        let harness = try ManagerHarness(bus: bus, ["--radio", "none"])
        defer { harness.stop() }
        let pid = harness.daemon.processIdentifier
        let before = try Self.memory(of: pid)
        let cpuBefore = try Self.cpuTime(of: pid)

        let directory = try TemporaryDirectory()
        _ = chmod(directory.path, 0o777)
        let marker = directory.path + "/sent"
        let sender = Process()
        sender.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        sender.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", Self.sender, bus.address, marker, "33000000", "8000000",
        ]
        let output = Pipe()
        sender.standardOutput = output
        sender.standardError = FileHandle.nullDevice
        try sender.run()

        // Get Status as soon as the signal is on the bus: it queues behind the 33 MB at gaend.
        let client = try await DBusConnection.bus(address: bus.address)
        try await eventually("the sender's signal on the bus") { FileManager.default.fileExists(atPath: marker) || !sender.isRunning }
        var latencies = [Duration]()
        for _ in 0..<5 {
            let start = ContinuousClock.now
            let status = try await client.call(
                destination: "org.gaend", path: "/org/gaend/Manager", interface: "org.freedesktop.DBus.Properties", member: "Get",
                [.string("org.gaend.Manager1"), .string("Status")])
            latencies.append(ContinuousClock.now - start)
            #expect(status.first?.variant?.string != nil)
        }
        let senderExit = sender.waitForExit()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        let after = try Self.memory(of: pid)
        let cpu = try Self.cpuTime(of: pid) - cpuBefore
        print(
            "gaend VmHWM \(before.peak) → \(after.peak) kB, VmRSS \(before.resident) → \(after.resident) kB; Get Status \(latencies); gaend CPU \(cpu); "
                + "8 MB Get refused: \(lines)")

        #expect(senderExit == .success)
        #expect(lines.first == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(latencies.count == 5)
        #expect(harness.daemon.isRunning)
        client.close()
        // The costs are asserted on the plain build only: under AddressSanitizer (make check-asan
        // runs this suite against its instrumented gaend) freed memory waits in a quarantine and
        // every copy is checked, so RSS and CPU time say nothing about gaend.
        guard !BuildUnderTest.isSanitized else { return }
        // Neither wall-clock time (the suite runs other suites beside it on 2 cores: the first Get
        // took 2.6 s once) nor CPU time are asserted tightly: the bounds catch the regression (4.84 s
        // of CPU, a Get stalled 4.3 s, the 8 MB refusal 4.7 s) with room for a loaded machine; the
        // figures of a quiet one are printed above (0.1 s of CPU, Gets of 0.11-0.14 s, then < 6 ms).
        #expect(cpu < .seconds(2), "gaend used \(cpu) of CPU on the two messages")
        #expect(latencies.sorted()[latencies.count / 2] < .seconds(2), "Get Status took \(latencies)")
        // libdbus holds a message twice while it loads it (its read buffer, then the message's
        // copy), which no setting avoids short of a size limit, and that disconnects (DBusLimits).
        // So the peak may grow by twice the message, no more; before, it grew by 1.35 GB.
        #expect(after.peak - before.peak < 2 * 33_000 + 8_000, "gaend's peak RSS \(before.peak) → \(after.peak) kB")
        #expect(after.resident < 100_000, "gaend's RSS \(after.resident) kB")
        #expect(after.resident - before.resident < 16_000, "gaend's RSS \(before.resident) → \(after.resident) kB")
    }
}
