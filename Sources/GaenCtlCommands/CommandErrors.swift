// SPDX-License-Identifier: GPL-3.0-or-later

/// gaenctl's exit codes (docs/ARCHITECTURE.md, "CLI"): scripts rely on them.
public enum GaenCtlExitCode: Int32, Sendable {
    case success = 0
    case operationFailed = 1
    case usage = 2
    case daemonUnreachable = 3
    case notAuthorized = 4
}

/// A bad argument: the message names the argument and what is wrong with it. Exit code 2.
public struct UsageError: Error, CustomStringConvertible {
    public var argument: String
    public var problem: String

    public init(_ argument: String, _ problem: String) {
        self.argument = argument
        self.problem = problem
    }

    public var description: String { "\(argument): \(problem)" }
}

/// An operation that was attempted and failed. Exit code 1, or 4 when permissions refused it.
public struct OperationError: Error, CustomStringConvertible {
    public var message: String
    public var exitCode: GaenCtlExitCode

    public init(_ message: String, exitCode: GaenCtlExitCode = .operationFailed) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}
