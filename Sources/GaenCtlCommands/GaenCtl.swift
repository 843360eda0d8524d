// SPDX-License-Identifier: GPL-3.0-or-later

package import ArgumentParser
import BuildRevision
import ENCore
import Foundation
import Glibc
import SystemCalls

/// `gaenctl`: drives gaend over D-Bus, and works offline with `tools`.
package struct GaenCtl: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "gaenctl",
        abstract: "Control and inspect gaend, the Exposure Notification daemon.",
        discussion: """
            Exit codes: 0 ok, 1 operation failed, 2 usage, 3 daemon unreachable, 4 not authorized.
            `tools` work offline; the other commands talk to gaend over D-Bus (--bus).
            """,
        version: BuildVersion.string,
        subcommands: [
            StatusCommand.self, GetCommand.self, EnableCommand.self, DisableCommand.self, KeysCommand.self, PreauthorizeCommand.self, DetectCommand.self,
            ExposuresCommand.self, HeardCommand.self, TestResultCommand.self, ShareCommand.self, ResetCommand.self, WatchCommand.self, LogCommand.self,
            ConfigCommand.self, Tools.self,
        ])

    package init() {}

    /// Parses `arguments` (without the program name), runs the command, and returns the exit code.
    /// Errors are written to standard error; usage errors exit 2, as every gaenctl failure has its
    /// own code rather than argument-parser's EX_USAGE (64).
    package static func run(arguments: [String]) async -> Int32 {
        do {
            var command = try parseAsRoot(globalOptionsMoved(arguments))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return GaenCtlExitCode.success.rawValue
        } catch let error as UsageError {
            writeError("gaenctl: \(error)")
            return GaenCtlExitCode.usage.rawValue
        } catch let error as OperationError {
            writeError("gaenctl: \(error)")
            return error.exitCode.rawValue
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                return 0
            }
            writeError(message)
            return code == .validationFailure ? GaenCtlExitCode.usage.rawValue : code.rawValue
        }
    }

    /// The options every daemon command takes (`--bus X`, `--json`) may come before the command,
    /// as with systemctl and busctl (`gaenctl --bus session --json status`): argument-parser reads
    /// options only after the command that declares them, so those given first are moved after
    /// the command's words (before a `--`, if any). Everything else stays where it is.
    static func globalOptionsMoved(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--bus=") {
                leading.append(argument)
                index += 1
            } else if argument == "--bus", index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty else { return arguments }
        var rest = Array(arguments[index...])
        let end = rest.firstIndex(of: "--") ?? rest.endIndex
        rest.insert(contentsOf: leading, at: end)
        return rest
    }

    /// Runs with the process's arguments and exits with the result.
    package static func runAndExit() async -> Never {
        // The daemon's allocator settings: `tools match` builds one large index after another.
        MemoryPolicy.apply()
        Glibc.exit(await run(arguments: Array(CommandLine.arguments.dropFirst())))
    }

    /// Escaped as everything gaenctl prints (`print` in TerminalOutput.swift).
    static func writeError(_ message: String) {
        FileHandle.standardError.write(Data((OutsideText.terminalSafe(message) + "\n").utf8))
    }

    /// Writes a line to standard output at once, unbuffered: for progress a pipe reader waits on.
    static func writeLineNow(_ line: String) {
        FileHandle.standardOutput.write(Data((OutsideText.terminalSafe(line) + "\n").utf8))
    }
}

/// The offline tools: no daemon, no bus.
struct Tools: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Offline tools: derive keys, build and parse advertisements, read a data directory.",
        subcommands: [
            DeriveTool.self, PayloadTool.self, ParseAdvTool.self, KeysTool.self, LogTool.self, InspectTool.self, ExportTool.self, MatchTool.self,
            ScoreTool.self, ReplayTool.self,
        ])
}
