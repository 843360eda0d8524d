// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

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
}
