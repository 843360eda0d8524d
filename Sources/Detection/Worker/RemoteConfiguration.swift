// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Storage

/// The exposure configuration a health authority serves (`exposure-configuration = https://…`):
/// read with the same parser as a local file and kept in `<data-dir>/exposure-configuration.json`
/// once it parsed, so the last good one is used while the server is unreachable.
enum RemoteConfiguration {
    static let maximumBytes = 64 << 10
    static let fileName = "exposure-configuration.json"

    static func cached(in dataDirectory: DataDirectory) -> ExposureConfiguration? {
        guard let bytes = try? AtomicFile.read(dataDirectory.path(of: fileName), limit: maximumBytes) else { return nil }
        return try? ExposureConfiguration(json: Data(bytes))
    }

    /// Parses `bytes` served at `url` and, if they are a configuration, keeps them as the cached one.
    static func accept(_ bytes: [UInt8], from url: String, in dataDirectory: DataDirectory) throws(DetectionWorkerError) -> ExposureConfiguration {
        let configuration: ExposureConfiguration
        do {
            configuration = try ExposureConfiguration(json: Data(bytes))
        } catch {
            throw .configuration(url: url, error)
        }
        do {
            try AtomicFile.write(bytes, to: dataDirectory.path(of: fileName))
        } catch {
            throw .storage(error)
        }
        return configuration
    }
}
