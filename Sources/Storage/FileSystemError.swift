// SPDX-License-Identifier: GPL-3.0-or-later

package import SystemCalls

/// A file-system call that failed: what was being done, to which path, and the errno it gave.
package struct FileSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the caller was doing ("renaming into place").
    package var operation: String
    package var path: String
    /// The system call's errno, or `nil` when the failure is not a system call's (a short read, a
    /// bad mode).
    package var errno: Errno?
    /// Extra words for failures that have no errno.
    package var detail: String?

    package init(operation: String, path: String, errno: Errno?, detail: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.detail = detail
    }

    /// The detail of a path that is not a regular file (`Syscall.requireRegularFile`).
    package static let notRegularFile = "not a regular file (a FIFO, a device or a socket)"

    /// Whether the path is something other than a regular file.
    package var isNotRegularFile: Bool { errno == nil && detail == Self.notRegularFile }

    /// Whether the failure is ENOENT: the path does not exist.
    package var isNotFound: Bool { errno == .notFound }

    /// Whether the file was larger than the reader's limit (EFBIG, as the readers report it).
    package var isTooLarge: Bool { errno == .fileTooLarge }

    /// Whether the failure is a lock held by another process (EWOULDBLOCK).
    package var isLockHeld: Bool { errno == .wouldBlock }

    /// Whether the failure is EACCES: the caller may not read or write there.
    package var isPermissionDenied: Bool { errno == .permissionDenied }

    /// Whether the failure is EEXIST: the name is taken.
    package var isExisting: Bool { errno == .exists }

    package var description: String {
        "\(operation) \(path): " + [errno?.description, detail].compactMap { $0 }.joined(separator: "; ")
    }
}
