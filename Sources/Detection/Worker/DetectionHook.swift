// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import ENCore

/// An optional command run after each detection with the outcome in its environment, for owners who
/// want a notification their own way (a mail, a buzzer on a GPIO pin). It gets at most
/// `timeout`; past that it is ended by its PID.
package struct DetectionHook: Sendable {
    package var command: String
    package var timeout: Duration

    package init(command: String, timeout: Duration = .seconds(30)) {
        self.command = command
        self.timeout = timeout
    }

    /// The variables the command sees.
    package static func environment(for outcome: DetectionOutcome) -> [String: String] {
        var environment = [
            "GAEND_RESULT": outcome.error != nil ? "error" : (outcome.exposed ? "exposed" : "none"),
            "GAEND_FINISHED": "\(outcome.finished.seconds)",
        ]
        if let error = outcome.error { environment["GAEND_ERROR"] = "\(error)" }
        if let result = outcome.result {
            environment["GAEND_WINDOWS"] = "\(result.windows.count)"
            environment["GAEND_MATCHED_KEYS"] = "\(result.statistics.matchedKeys)"
            environment["GAEND_EXPOSED_DAYS"] = outcome.answer.days.map(\.description).joined(separator: " ")
            environment["GAEND_LAST_EXPOSURE"] = outcome.answer.lastExposure.map { "\($0.seconds)" } ?? ""
            environment["GAEND_NEW_RESULTS"] = "\(result.statistics.newResults)"
            environment["GAEND_MAXIMUM_SCORE"] = "\(result.dailySummaries.map(\.total.maximumScore).max() ?? 0)"
        }
        return environment
    }

    /// Runs the command and waits for it (or for the timeout). Returns its exit status, or `nil`
    /// if it could not start or was ended.
    package func run(for outcome: DetectionOutcome) async -> Int32? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.environment = ProcessInfo.processInfo.environment.merging(Self.environment(for: outcome)) { $1 }
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let pid = process.processIdentifier
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }
}
