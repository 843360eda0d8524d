// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// A dbus-daemon of the benchmark's own, ended with it (by its PID).
final class PrivateBus {
    let address: String
    private let process: Process

    init() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        address = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
