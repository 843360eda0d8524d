// SPDX-License-Identifier: GPL-3.0-or-later

/// A configuration value that is wrong, named by its key.
package struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    package var key: String
    package var problem: String

    package init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    package var description: String { key.isEmpty ? problem : "\(key): \(problem)" }
}
