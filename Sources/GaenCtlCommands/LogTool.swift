// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import Glibc
import Storage

/// `gaenctl tools log`: the contact log of a data directory, read (and, for tests, written) without
/// the daemon.
struct LogTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Inspect a contact log: statistics, verification, export; import a btsnoop capture; synthetic appends for tests.",
        subcommands: [LogStatsTool.self, LogVerifyTool.self, LogExportTool.self, LogAppendTool.self, LogImportTool.self])
}

/// Options every log tool takes.
struct LogToolOptions: ParsableArguments {
    /// Where an installed gaend keeps its data (`data-dir`'s default).
    static let daemonDataDirectory = "/var/lib/gaend"

    @Option(help: "The daemon's data directory (the log is its contacts/ folder; default \(Self.daemonDataDirectory)).", completion: .directory)
    var dataDir: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    /// The data directory, which must exist.
    func dataDirectory() throws -> DataDirectory { try Self.existingDirectory(dataDir ?? Self.daemonDataDirectory) }

    /// `path` as a data directory, which must exist (exit 1, or 4 when permissions refuse it).
    static func existingDirectory(_ path: String) throws -> DataDirectory {
        let directory = DataDirectory(path: path)
        do {
            guard try directory.exists() else { throw OperationError("--data-dir: \(path) does not exist") }
        } catch let error as FileSystemError {
            throw OperationError("--data-dir: \(error)", exitCode: error.isPermissionDenied ? .notAuthorized : .operationFailed)
        }
        return directory
    }
}

/// Turns a log failure into gaenctl's exit codes: permissions → 4, anything else → 1.
func logOperationError(_ error: ContactLogError) -> OperationError {
    if case .storage(let cause) = error, cause.isPermissionDenied {
        return OperationError("\(error) (run as the daemon's user or root)", exitCode: .notAuthorized)
    }
    return OperationError("\(error)")
}

/// Parses an optional `YYYY-MM-DD` day argument.
func parseDay(_ text: String?, argument: String) throws(UsageError) -> UTCDay? {
    guard let text else { return nil }
    guard let day = UTCDay(parsing: text) else {
        throw UsageError(argument, "'\(text)' is not a date written YYYY-MM-DD")
    }
    return day
}
