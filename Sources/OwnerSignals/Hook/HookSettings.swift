// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
package import GaendConfiguration

/// The exposure hook as configured (`exposure-hook`, `exposure-hook-timeout`), checked.
package struct HookSettings: Sendable, Equatable {
    package var program: String
    package var timeout: Duration

    package init(program: String, timeout: Duration) {
        self.program = program
        self.timeout = timeout
    }

    /// The configuration's hook, or nil when none is set. A program that is not an executable
    /// regular file, or that someone else than root or gaend could change (`HookPathCheck`), is
    /// refused naming the key and why (exit 2 at start, a warning at reload).
    package static func checked(_ configuration: DaemonConfiguration) throws(DaemonConfigurationError) -> HookSettings? {
        guard let program = configuration.exposureHook else { return nil }
        var status = stat()
        guard stat(program, &status) == 0 else {
            throw DaemonConfigurationError(key: "exposure-hook", problem: "\(program) does not exist (\(String(cString: strerror(errno))))")
        }
        guard status.st_mode & S_IFMT == S_IFREG, access(program, X_OK) == 0 else {
            throw DaemonConfigurationError(key: "exposure-hook", problem: "\(program) is not an executable file")
        }
        if let problem = HookPathCheck.problem(with: program) {
            throw DaemonConfigurationError(key: "exposure-hook", problem: problem)
        }
        return HookSettings(program: program, timeout: .seconds(configuration.exposureHookTimeoutSeconds))
    }
}
