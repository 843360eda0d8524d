// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// A fresh directory under the system's temporary directory, removed when the test is done.
package final class TemporaryDirectory {
    package let path: String

    package init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/gaend-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    package func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    /// Writes an executable `#!/bin/sh` script `name` holding `body`, and returns its path. Opened
    /// close-on-exec: a program another test spawns meanwhile must not inherit the descriptor, or
    /// executing the script fails with ETXTBSY for as long as that program runs (a CI run met it).
    package func writeScript(_ name: String, _ body: String) throws -> String {
        let path = self.path + "/" + name
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard file >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        let bytes = Array("#!/bin/sh\n\(body)\n".utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
        Glibc.close(file)
        guard written == bytes.count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        return path
    }
}
