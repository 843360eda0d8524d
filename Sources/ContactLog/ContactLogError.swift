// SPDX-License-Identifier: GPL-3.0-or-later

package import Storage

/// Why the contact log could not be opened, written or read.
package enum ContactLogError: Error, Sendable, CustomStringConvertible {
    case storage(FileSystemError)
    /// Another process (another gaend, or `gaenctl tools log append`) is writing this log.
    case locked(path: String)

    package var description: String {
        switch self {
        case .storage(let error): return "contact log: \(error)"
        case .locked(let path): return "contact log \(path) is being written by another process"
        }
    }
}
