// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import SystemCalls

/// The daemon's data directory (`/var/lib/gaend` by default): TEK history, contact log and state.
///
/// The directory is private to the daemon's user (mode 0700), and every file in it is 0600, because
/// what it holds is the owner's keys and the identifiers of everyone they met.
package struct DataDirectory: Sendable, Hashable {
    /// The directory's path, without a trailing slash.
    package let path: String

    /// The mode of the directory and of any sub-directory the daemon makes in it.
    package static let directoryMode: UInt32 = 0o700
    /// The mode of every file the daemon writes.
    package static let fileMode: UInt32 = 0o600

    package init(path: String) {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        self.path = path
    }

    /// The path of an entry of the directory.
    package func path(of name: String) -> String { path == "/" ? "/" + name : path + "/" + name }

    /// A sub-directory (e.g. `contacts`) as a data directory of its own.
    package func subdirectory(_ name: String) -> DataDirectory { DataDirectory(path: path(of: name)) }

    /// Whether the directory exists.
    package func exists() throws(FileSystemError) -> Bool {
        guard let info = try Syscall.status(path) else { return false }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw FileSystemError(operation: "opening data directory", path: path, errno: Errno(ENOTDIR))
        }
        return true
    }

    /// Creates the directory (and missing parents) if needed, and makes it 0700. An existing directory
    /// that others could read is tightened, not refused: an administrator's `mkdir` should not stop the
    /// daemon, and leaving it open would leak keys.
    ///
    /// - Returns: `true` if the mode had to be tightened.
    @discardableResult
    package func prepare() throws(FileSystemError) -> Bool {
        if try !exists() {
            try createParents()
            do {
                try Syscall.mkdir(path, mode: mode_t(Self.directoryMode))
            } catch  where error.isExisting {
                // Another process made it meanwhile; fall through to the mode check.
            }
        }
        guard let info = try Syscall.status(path) else {
            throw FileSystemError(operation: "opening data directory", path: path, errno: .notFound)
        }
        if info.st_mode & 0o7777 != mode_t(Self.directoryMode) {
            try Syscall.chmod(path, mode: mode_t(Self.directoryMode))
            return true
        }
        return false
    }

    /// Parents are created with the usual 0755: only the data directory itself is private.
    private func createParents() throws(FileSystemError) {
        var prefix = ""
        let components = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        for component in components {
            prefix += (prefix.isEmpty && !path.hasPrefix("/") ? "" : "/") + component
            if try Syscall.status(prefix) == nil {
                do {
                    try Syscall.mkdir(prefix, mode: 0o755)
                } catch  where error.isExisting {}
            }
        }
    }
}
