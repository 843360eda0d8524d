// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

extension SystemCall {
    /// Names the calling thread as `top -H`, /proc and the idle benchmark show it (at most 15
    /// bytes): written to /proc/thread-self/comm, since glibc's pthread_setname_np is not in
    /// Swift's Glibc module and Foundation's `Thread.name` did not reach the kernel.
    package static func nameThisThread(_ name: String) {
        let bytes = Array(name.utf8.prefix(15))
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        _ = bytes.withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
        Glibc.close(file)
    }
}
