// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A file-system call that failed: what was being done, to which path, and the errno it gave.
public struct FileSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the caller was doing ("renaming into place").
    public var operation: String
    public var path: String
    /// The errno value, or 0 when the failure is not a system call's (a short read, a bad mode).
    public var errno: Int32
    /// Extra words for failures that have no errno.
    public var detail: String?

    public init(operation: String, path: String, errno: Int32, detail: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.detail = detail
    }

    /// Whether the failure is ENOENT: the path does not exist.
    public var isNotFound: Bool { errno == ENOENT }

    /// Whether the file was larger than the reader's limit (EFBIG, as the readers report it).
    public var isTooLarge: Bool { errno == EFBIG }

    /// Whether the failure is a lock held by another process (EWOULDBLOCK).
    public var isLockHeld: Bool { errno == EWOULDBLOCK }

    public var description: String {
        var text = "\(operation) \(path): "
        if errno != 0 {
            text += String(cString: strerror(errno)) + " (errno \(errno))"
        }
        if let detail {
            text += errno != 0 ? "; \(detail)" : detail
        }
        return text
    }
}
