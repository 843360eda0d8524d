// SPDX-License-Identifier: GPL-3.0-or-later

/// gaenctl's exit codes (docs/gaenctl.md, "Exit codes"): scripts rely on them.
package enum GaenCtlExitCode: Int32, Sendable {
    case success = 0
    case operationFailed = 1
    case usage = 2
    case daemonUnreachable = 3
    case notAuthorized = 4
    /// gaend owns its name on the bus but did not answer within the call's time.
    case daemonBusy = 5
}

/// A bad argument: the message names the argument and what is wrong with it. Exit code 2.
package struct UsageError: Error, CustomStringConvertible {
    package var argument: String
    package var problem: String

    package init(_ argument: String, _ problem: String) {
        self.argument = argument
        self.problem = problem
    }

    package var description: String { "\(argument): \(problem)" }
}

/// An operation that was attempted and failed. Exit code 1, or 4 when permissions refused it.
package struct OperationError: Error, CustomStringConvertible {
    package var message: String
    package var exitCode: GaenCtlExitCode

    package init(_ message: String, exitCode: GaenCtlExitCode = .operationFailed) {
        self.message = message
        self.exitCode = exitCode
    }

    package var description: String { message }
}
