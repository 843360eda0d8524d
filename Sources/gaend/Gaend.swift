// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore

/// The daemon's entry point. Today it only reports its version: the radio, the contact log, the
/// detection worker and the D-Bus service arrive with their issues (see README, "What works today").
@main
struct Gaend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gaend",
        abstract: "The GAEN (Exposure Notification) daemon.",
        discussion: """
            Not yet a daemon: this build prints its version and exits. The options it will take \
            (--config, --data-dir, --radio, --bus) are described in docs/ARCHITECTURE.md.
            """,
        version: GaendVersion.string)

    mutating func run() throws {
        print("gaend \(GaendVersion.string)")
    }
}
