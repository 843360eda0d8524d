// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The files opened in a directory, as the kernel tells inotify (IN_OPEN): what a test measures
/// when it asserts that reading something opens no file (issue 48: ten GetAll opened
/// `detection-budget` 270 times).
package final class FileOpenWatch {
    private let descriptor: Int32

    package init(directory: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw WatchError(what: "inotify_init1", code: errno) }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_OPEN)) >= 0 else {
            let code = errno
            close(descriptor)
            throw WatchError(what: "inotify_add_watch \(directory)", code: code)
        }
    }

    deinit { close(descriptor) }

    /// The names opened since the last call (the directory itself as ""), in order.
    package func opened() -> [String] {
        var names = [String]()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return names }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
            while offset + 16 <= count {
                let length = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8 | Int(buffer[offset + 14]) << 16 | Int(buffer[offset + 15]) << 24
                let name = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                names.append(String(decoding: name, as: UTF8.self))
                offset += 16 + length
            }
        }
    }

    package struct WatchError: Error, CustomStringConvertible {
        var what: String
        var code: Int32
        package var description: String { "\(what): \(String(cString: strerror(code)))" }
    }
}
