// SPDX-License-Identifier: GPL-3.0-or-later

package import ArgumentParser
import Foundation

extension AsyncParsableCommand {
    /// Parses and runs like argument-parser's own `main`, but a usage error exits 2, the code the
    /// documentation gives usage errors for all three programs (gaenctl's table among them), not
    /// argument-parser's EX_USAGE (64).
    package static func mainExitingTwoOnUsage() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            exit(withError: ExitCode(2))
        }
    }
}
