// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation

/// Runs one of the package's executables as a user would, and captures what it printed.
package struct ToolRun: Sendable {
    package var status: Int32
    package var standardOutput: String
    package var standardError: String
}

package enum ToolRunner {
    /// The directory the programs under test are taken from: `GAEND_PRODUCTS_DIR` when set (`make
    /// check` points it at the release build, the binaries `make install` ships, so that the process
    /// suites test what is installed), else the directory the test runner was built into.
    package static func productsDirectory() throws -> URL {
        if let shipped = ProcessInfo.processInfo.environment["GAEND_PRODUCTS_DIR"], !shipped.isEmpty {
            return URL(fileURLWithPath: shipped)
        }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        // On some platforms the runner is inside an .xctest bundle.
        while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS"
            || directory.lastPathComponent == "Contents"
        {
            directory.deleteLastPathComponent()
        }
        return directory
    }

    /// Runs `tool` (e.g. "gaenctl") with `arguments` and waits for it to exit; a tool still
    /// running after `limit` seconds is killed (exit 124), so a hang fails a test instead of CI.
    package static func run(_ tool: String, _ arguments: [String], limit: Int = 120) throws -> ToolRun {
        let executable = try productsDirectory().appendingPathComponent(tool)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ToolRunnerError(message: "\(tool) is not built at \(executable.path)")
        }
        return try runProgram(executable.path, arguments, limit: limit)
    }

    /// Runs a program (a built tool, busctl, gdbus...) under `timeout` and waits for it, without
    /// Foundation's Process (see `SpawnedProgram`).
    package static func runProgram(_ path: String, _ arguments: [String], environment: [String: String]? = nil, limit: Int = 120) throws -> ToolRun {
        let outcome = try SpawnedProgram.run(["/usr/bin/timeout", "-k", "5", "\(limit)", path] + arguments, environment: environment)
        return ToolRun(
            status: outcome.exit.status, standardOutput: String(decoding: outcome.output, as: UTF8.self),
            standardError: String(decoding: outcome.error, as: UTF8.self))
    }
}

package struct ToolRunnerError: Error, CustomStringConvertible {
    package var message: String
    package init(message: String) { self.message = message }
    package var description: String { message }
}

extension Pipe {
    /// What a started child printed up to its first newline (or its end): the fixtures' "ready"
    /// lines. Blocks until then.
    package func firstLine() -> String {
        var text = ""
        while !text.contains("\n") {
            let chunk = fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }
}
