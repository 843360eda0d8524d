// SPDX-License-Identifier: GPL-3.0-or-later

import Daemon
import GaendConfiguration

/// gaend.conf, which gaend reads at start and on SIGHUP and `gaenctl config show` prints.
enum ConfigurationFuzzing {
    /// Decoded as gaend decodes the file (invalid UTF-8 replaced), applied, then described.
    @Sendable static func file(_ bytes: [UInt8]) {
        var configuration = DaemonConfiguration()
        do {
            try configuration.apply(file: String(decoding: bytes, as: UTF8.self), path: "gaend.conf")
        } catch {
            _ = error.description
        }
        _ = configuration.describedValues()
    }
}
