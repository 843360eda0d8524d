// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import SystemCalls

/// sd_notify(3) without libsystemd: one datagram per message to $NOTIFY_SOCKET (a path, or an
/// abstract socket when it starts with `@`). Does nothing when not started by systemd.
package struct SystemdNotifier: Sendable {
    let address: UnixSocketAddress?

    package init(environment: [String: String]) {
        address = environment["NOTIFY_SOCKET"].flatMap(UnixSocketAddress.init)
    }

    package var isActive: Bool { address != nil }

    /// Sends `READY=1`, `STATUS=...`, `RELOADING=1`, `STOPPING=1`...; failures are ignored, as
    /// sd_notify's are by most daemons (the manager may be gone).
    @discardableResult
    package func notify(_ message: String) -> Bool {
        guard let address, let descriptor = try? SystemCall.socket(domain: AF_UNIX, type: Int32(SOCK_DGRAM.rawValue)) else { return false }
        defer { SystemCall.close(descriptor) }
        let bytes = Array(message.utf8)
        let sent = bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.send(descriptor, raw, to: address) } }
        return (try? sent.get()) == bytes.count
    }
}
