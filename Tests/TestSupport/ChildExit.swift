// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation
import Glibc

/// How a child process ended.
package struct ChildExit: Equatable, Sendable, CustomStringConvertible {
    /// The exit status, or the number of the signal that ended it.
    package var status: Int32
    /// False when a signal ended it.
    package var exited: Bool

    package init(status: Int32, exited: Bool) {
        self.status = status
        self.exited = exited
    }

    /// Exit status 0.
    package static let success = ChildExit(status: 0, exited: true)

    package var description: String { exited ? "exit \(status)" : "signal \(status)" }
}

extension Process {
    /// Waits until the child has ended and says how, from waitid on its PID: Foundation's own
    /// notice, which `waitUntilExit` and `terminationStatus` wait for, was once never delivered
    /// (see `SpawnedProgram`). The child is left for Foundation to reap, so that its PID cannot be
    /// reused while Foundation still waits for it.
    @discardableResult
    package func waitForExit() -> ChildExit {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1 {
            if errno == EINTR { continue }
            // ECHILD: Foundation reaped it first, and its record is final once it says so.
            while isRunning { usleep(1_000) }
            return ChildExit(status: terminationStatus, exited: terminationReason == .exit)
        }
        return ChildExit(status: info._sifields._sigchld.si_status, exited: Int(info.si_code) == CLD_EXITED)
    }
}
