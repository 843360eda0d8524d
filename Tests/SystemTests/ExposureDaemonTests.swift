// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Logging
import Storage
import Testing
import SystemCalls

/// A planted exposure found through Manager1: the contact log holds a key's RPIs, the key server's
/// export holds the key; `gaenctl detect` shows progress and the window, `watch` sees
/// ExposureDetected, and systemd's notify socket gets READY, STATUS, RELOADING and STOPPING.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct ExposureDaemonTests {
    @Test func aPlantedExposureIsDetectedAndSignalled() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        let tek = Bytes16(words: (0x0102_0304_0506_0708, 0x090A_0B0C_0D0E_0F10))
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(data: data, pemPath: pem, tek: tek, day: day, region: "CH")
        let server = planted.server
        let notify = try NotifySocket(path: directory.path + "/notify.sock")

        let harness = try ManagerHarness(
            environment: ["NOTIFY_SOCKET": notify.path], directory: directory,
            ["--radio", "none", "--index-url", server.baseURL + "/index.txt", "--export-key", "310:v1:\(pem)", "--enable", "true"])
        let ready = try notify.receive()
        #expect(ready.hasPrefix("READY=1\nSTATUS=exposure notification "), "\(ready)")

        let watchOutput = directory.path + "/watch.out"
        let watch = try ManagerDaemonTests.startWatch(harness, output: watchOutput, count: nil)
        defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0, "\(detected.standardError)")
        #expect(detected.standardOutput.contains("progress 1/1 keys"))
        #expect(detected.standardOutput.contains("files: 1, keys: 1, matched keys: 1"))
        #expect(detected.standardOutput.contains("exposure windows: 1"))
        #expect(detected.standardOutput.contains("  \(day): score "), "\(detected.standardOutput)")
        // The answer comes first, after the progress lines.
        let answer = detected.standardOutput.split(separator: "\n").first { !$0.hasPrefix("progress") }
        #expect(answer?.hasPrefix("exposure on \(day) (score ") == true, "\(detected.standardOutput)")
        try await eventually("DetectionFinished") { (try? String(contentsOfFile: watchOutput, encoding: .utf8))?.contains("DetectionFinished") == true }
        let watchedSoFar = (try? String(contentsOfFile: watchOutput, encoding: .utf8)) ?? ""
        #expect(watchedSoFar.contains("ExposureDetected"), "\(watchedSoFar)\n\(detected.standardOutput)")
        let signalled = try String(contentsOfFile: watchOutput, encoding: .utf8)
        #expect(signalled.split(separator: "\n").contains { $0.contains(#",1],"signal":"ExposureDetected""#) })
        let windows = try harness.json(["exposures", "--windows"]) as? [[String: Any]] ?? []
        #expect(windows.count == 1)
        #expect((windows.first?["scan_instances"] as? [Any])?.count == 5)
        let summaries = try harness.json(["exposures", "--summaries"]) as? [[String: Any]] ?? []
        #expect(summaries.count == 1)
        #expect(summaries.first?["day"] as? String == day.description)
        let windowText = try harness.ctl(["exposures"]).standardOutput
        #expect(windowText.hasPrefix("\(day) confirmed-test, infectiousness standard, calibration low: 5 scan instances\n"), "\(windowText)")
        #expect(windowText.split(separator: "\n").filter { $0.hasPrefix("  typical 55 dB, minimum 55 dB, ") }.count == 5, "\(windowText)")
        let table = try harness.ctl(["exposures", "--summaries"]).standardOutput
        #expect(table.hasPrefix("DAY "), "\(table)")
        #expect(table.contains("\(day)  all"), "\(table)")
        #expect(!table.contains("["), "\(table)")

        // The next run finds no new file: the exposure is still the answer, in detect and status.
        let again = try harness.ctl(["detect"])
        #expect(again.standardOutput.contains("files: 0, keys: 0, matched keys: 0"), "\(again.standardOutput)")
        #expect(again.standardOutput.contains("exposure on \(day) (score "), "\(again.standardOutput)")
        #expect((try harness.json(["exposures", "--windows"]) as? [Any])?.count == 1)
        let status = try harness.ctl(["status"]).standardOutput.split(separator: "\n")
        #expect(status.dropFirst().first == "\tExposureDays: \(day)", "\(status)")
        #expect(status.dropFirst(2).first?.hasPrefix("\tLastExposureTime: \(day)T09:00:00Z") == true, "\(status)")
        #expect(try harness.status()["exposure_days"] as? [String] == [day.description])
        // The answer was announced with PropertiesChanged.
        try await eventually("ExposureDays in PropertiesChanged") {
            (try? String(contentsOfFile: watchOutput, encoding: .utf8))?.contains(#""exposure_days":[""# + day.description) == true
        }
        // ResetAllData deletes the stored results with everything else.
        #expect(try harness.ctl(["reset", "--yes"]).status == 0)
        #expect(try harness.status()["exposure_days"] as? [String] == [])
        #expect(try harness.ctl(["exposures"]).standardOutput == "no exposure windows\n")

        // SIGHUP and SIGTERM, as systemd sees them.
        kill(harness.daemon.processIdentifier, SIGHUP)
        // (STATUS= lines may come between, when the status changes.)
        func next() throws -> String {
            var message = try notify.receive()
            while message.hasPrefix("STATUS=") { message = try notify.receive() }
            return message
        }
        #expect(try next() == "RELOADING=1")
        #expect(try next() == "READY=1")
        #expect(harness.stop() == .success)
        var last = ""
        while let message = try? notify.receive(), !message.isEmpty { last = message }
        #expect(last == "STOPPING=1")
    }
}

/// A datagram socket standing in for systemd's notify socket.
final class NotifySocket {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw ToolRunnerError(message: "bind \(path): errno \(errno)") }
        // A bound on every wait: a message that never comes fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next message (throws after 10 s without one).
    func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count >= 0 else { throw ToolRunnerError(message: "no notify message: errno \(errno)") }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}
