// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// gaend.conf read within a bound (issue 53: a 400 MB file was read whole, 848 MB of RSS): a
/// configuration is a few hundred bytes, so one over 64 KiB is refused naming its size, and
/// anything but a regular file (a FIFO would block the read, at start and at every reload) too.
package enum ConfigurationFile {
    package static let maximumBytes = 64 << 10

    /// The file's text; `nil` when there is no file at `path`.
    package static func read(_ path: String) throws(DaemonConfigurationError) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw DaemonConfigurationError(key: "--config", problem: "\(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) is not a regular file")
        }
        guard info.st_size <= maximumBytes else {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) is \(info.st_size) bytes, over the \(maximumBytes)-byte limit of a configuration")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) cannot be read")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumBytes + 1) ?? Data()
        } catch {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) cannot be read: \(error)")
        }
        // It may have grown since it was looked at.
        guard data.count <= maximumBytes else {
            throw DaemonConfigurationError(key: "--config", problem: "\(path) is over the \(maximumBytes)-byte limit of a configuration")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
