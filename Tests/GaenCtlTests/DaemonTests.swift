// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import Foundation
import KeySchedule
import GaendTestSupport
import Glibc
import Storage
import Testing

/// Two `gaend` processes on two Bumble controllers: each logs the other, and SIGTERM stops both
/// cleanly.
@Suite(.enabled(if: BumbleFixture.python != nil, "no Bumble venv: run `make test-peers` (make check does)"))
struct DaemonTests {
    @Test(.timeLimit(.minutes(1)))
    func twoDaemonsHearEachOtherAndStopCleanly() async throws {
        let fixture = try BumbleFixture(controllers: 2, arguments: ["--pair-rssi", "C0:C1=-70", "--pair-rssi", "C1:C0=-80"])
        let directory = try TemporaryDirectory()
        let executable = try ToolRunner.productsDirectory().appendingPathComponent("gaend")
        var daemons = [Process]()
        for index in 0..<2 {
            let process = Process()
            process.executableURL = executable
            process.arguments = [
                "--radio", "h4+unix:\(fixture.sockets[index])", "--data-dir", "\(directory.path)/d\(index)", "--scan-window", "0.5",
                "--scan-interval", "1-1", "--rotation-interval", "1-2", "--calibration-confidence", "low",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            daemons.append(process)
        }
        defer { for daemon in daemons where daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        // Wait (bounded) until each log holds an aggregate of the other's advertisement.
        func aggregates(_ index: Int) -> [ContactAggregate] {
            var found = [ContactAggregate]()
            try? ContactLogReader(dataDirectory: DataDirectory(path: "\(directory.path)/d\(index)")).forEachRecord { record in
                if case .aggregate(let aggregate) = record { found.append(aggregate) }
            }
            return found
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while (aggregates(0).isEmpty || aggregates(1).isEmpty) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(aggregates(1).allSatisfy { $0.rssi.maximum == -70 })
        #expect(aggregates(0).allSatisfy { $0.rssi.maximum == -80 })
        #expect(!aggregates(0).isEmpty && !aggregates(1).isEmpty)

        // SIGTERM: both exit 0, within the 10 s the unit allows.
        let stopping = ContinuousClock.now
        for daemon in daemons { kill(daemon.processIdentifier, SIGTERM) }
        for daemon in daemons { daemon.waitUntilExit() }
        #expect(daemons.allSatisfy { $0.terminationStatus == 0 && $0.terminationReason == .exit })
        #expect(ContinuousClock.now - stopping < .seconds(10))
        // Nothing torn: the window open at the signal was flushed.
        for index in 0..<2 {
            #expect(try ContactLogReader(dataDirectory: DataDirectory(path: "\(directory.path)/d\(index)")).verify().isIntact)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aDaemonReconnectsWhenItsControllerComesBack() async throws {
        let directory = try TemporaryDirectory()
        let fixture = try BumbleFixture(controllers: 2)
        let sockets = fixture.sockets
        let daemon = Process()
        daemon.executableURL = try ToolRunner.productsDirectory().appendingPathComponent("gaend")
        daemon.arguments = ["--radio", "h4+unix:\(sockets[0])", "--data-dir", "\(directory.path)/d", "--scan-window", "0.3", "--scan-interval", "1-1"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        func windows() -> Int {
            (try? ContactLogReader(dataDirectory: DataDirectory(path: "\(directory.path)/d")).verify().segments.reduce(0) { $0 + $1.scanWindows }) ?? 0
        }
        func waitForMoreWindows(than count: Int) async throws {
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while windows() <= count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        }
        try await waitForMoreWindows(than: 0)
        #expect(windows() > 0)

        // The controller process dies; a new one comes up on the same socket; scanning resumes.
        // (The first fixture object lives on: its directory holds the sockets.)
        fixture.stop()
        let before = windows()
        let restarted = try BumbleFixture(controllers: 2, socketsIn: sockets)
        try await waitForMoreWindows(than: before + 1)
        #expect(windows() > before + 1)
        #expect(daemon.isRunning)
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
        withExtendedLifetime((fixture, restarted)) {}
    }

    @Test(.timeLimit(.minutes(1)))
    func bumblesOwnHostAndTheDaemonHearEachOther() async throws {
        let fixture = try BumbleFixture(controllers: 2, arguments: ["--pair-rssi", "C0:C1=-70", "--pair-rssi", "C1:C0=-66"])
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: "\(directory.path)/d")
        let daemon = Process()
        daemon.executableURL = try ToolRunner.productsDirectory().appendingPathComponent("gaend")
        daemon.arguments = ["--radio", "h4+unix:\(fixture.sockets[0])", "--data-dir", data.path, "--scan-window", "0.5", "--scan-interval", "1-1"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        // The peer runs for 4 s on the other controller, under a timeout (its host can hang).
        let peer = Process()
        peer.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        peer.arguments = ["20", try #require(BumbleFixture.python), BumbleFixture.root.appendingPathComponent("testbed/peer.py").path, "unix:\(fixture.sockets[1])", "4"]
        let output = Pipe()
        peer.standardOutput = output
        peer.standardError = FileHandle.nullDevice
        try peer.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        peer.waitUntilExit()
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)

        // What the peer heard: the daemon's 31-byte frame, legacy, from a non-resolvable random
        // address, at the pair's RSSI, with the RPI `tools derive` gives for the stored TEK.
        let heard = text.split(separator: "\n").filter { $0.hasPrefix("HEARD ") }.map { $0.split(separator: " ") }
        #expect(!heard.isEmpty, "peer output: \(text)")
        let key = try #require(try KeyHistoryFile.read(data.path(of: KeyHistoryFile.name))?.keys.last?.key)
        let now = try #require(ENIntervalNumber(containing: SystemWallClock().now()))
        let crypto = try ExposureKeyCrypto()
        let rpik = crypto.rpik(for: key.keyData)
        let expected = Set([now, now.advanced(by: -1)].map { crypto.rpi(rpik: rpik, interval: $0).description })
        for fields in heard {
            #expect(fields[2] == "1")  // random address
            #expect(Int(fields[1].prefix(2), radix: 16)! & 0xC0 == 0)  // non-resolvable private
            #expect(fields[3] == "-70")
            #expect(fields[4] == "1")  // legacy
            let frame = String(fields[5])
            #expect(frame.count == 62 && frame.hasPrefix("02011a03036ffd17166ffd"))
            #expect(expected.contains(String(frame.dropFirst(22).prefix(32))))
        }
        // What the daemon logged: the peer's frame of the official vectors, at the other pair's RSSI.
        var logged = [ContactAggregate]()
        try ContactLogReader(dataDirectory: data).forEachRecord { if case .aggregate(let a) = $0 { logged.append(a) } }
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { $0.rpi.description == "8be6cd371c5c891604bfbe49df845096" && $0.aem.description == "72033874" })
        #expect(logged.allSatisfy { $0.rssi.maximum == -66 })
    }

    @Test func badConfigurationExitsTwoNamingTheKey() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/gaend.conf"
        try Data("radio = none\n# a comment\nscan-window = 0\n".utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try ToolRunner.run("gaend", ["--config", file])
        #expect(fromFile.status == 2)
        #expect(fromFile.standardError.contains("scan-window: '0' is not a number of seconds"))
        let fromOption = try ToolRunner.run("gaend", ["--radio", "h4:/dev/ttyS0@7", "--data-dir", directory.path])
        #expect(fromOption.status == 2)
        #expect(fromOption.standardError.contains("radio: '7' is not a supported baud rate"))
        let unknown = try ToolRunner.run("gaend", ["--config", directory.path + "/missing.conf"])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("--config"))
    }
}
