// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// Which file a descriptor is open on: its device and inode, as fstat(2) gives them. systemd
/// names the journal's stream this way in $JOURNAL_STREAM (`DEVICE:INODE`, decimal).
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// `DEVICE:INODE` in decimal, as systemd writes it; `nil` for anything else.
    package init?(journalStream text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        self.init(device: device, inode: inode)
    }
}

extension SystemCall {
    /// The file `fd` is open on.
    package static func identity(of fd: Int32) throws(Errno) -> FileIdentity {
        var info = stat()
        _ = try retrying { fstat(fd, &info) }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
