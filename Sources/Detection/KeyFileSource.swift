// SPDX-License-Identifier: GPL-3.0-or-later

import KeyFiles

/// A key file by name, and how to get its bytes when the pipeline needs them (twice: once for the
/// verdicts, once for matching).
package struct KeyFileSource: Sendable {
    package var name: String
    private let read: @Sendable () throws -> [UInt8]

    package init(name: String, read: @escaping @Sendable () throws -> [UInt8]) {
        self.name = name
        self.read = read
    }

    /// The archive's bytes; a failure to read them is the file's own error.
    func bytes() throws(KeyFileError) -> [UInt8] {
        do {
            return try read()
        } catch let error as KeyFileError {
            throw error
        } catch {
            throw .archive("cannot be read: \(error)")
        }
    }
}
