// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// sd_notify(3) without libsystemd: one datagram per message to $NOTIFY_SOCKET (a path, or an
/// abstract socket when it starts with `@`). Does nothing when not started by systemd.
public struct SystemdNotifier: Sendable {
    let socketPath: String?

    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public var isActive: Bool { socketPath != nil }

    /// Sends `READY=1`, `STATUS=...`, `RELOADING=1`, `STOPPING=1`...; failures are ignored, as
    /// sd_notify's are by most daemons (the manager may be gone).
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard let socketPath else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let sent = Array(message.utf8).withUnsafeBytes { payload in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, payload.baseAddress, payload.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
        return sent == message.utf8.count
    }
}
