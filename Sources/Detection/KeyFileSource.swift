// SPDX-License-Identifier: GPL-3.0-or-later

import KeyFiles

/// A key file by name, and where its archive is when the pipeline reads it (several times: for the
/// verdicts, the check and each matching pass): a file on disk, read a range at a time (the
/// daemon's spool, the tools' arguments), or bytes in memory (tests).
package struct KeyFileSource: Sendable {
    package var name: String
    private let open: @Sendable () throws(KeyFileError) -> ArchiveBytes

    /// An archive in memory, read when needed.
    package init(name: String, read: @escaping @Sendable () throws -> [UInt8]) {
        self.name = name
        open = { () throws(KeyFileError) in
            let bytes: [UInt8]
            do {
                bytes = try read()
            } catch let error as KeyFileError {
                throw error
            } catch {
                throw .archive("cannot be read: \(error)")
            }
            return try ArchiveBytes.checked(bytes)
        }
    }

    /// An archive in a file, never read whole.
    package init(name: String, path: String) {
        self.name = name
        open = { () throws(KeyFileError) in try ArchiveBytes(path: path) }
    }

    /// The archive's bytes; a failure to read them is the file's own error.
    func archive() throws(KeyFileError) -> ArchiveBytes {
        try open()
    }
}
