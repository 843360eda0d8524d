// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// How one thread wakes another that waits in poll(2): a byte written to one end of a
/// non-blocking socketpair makes the other end readable. A socketpair, not a pipe: a wake after
/// the waiting side has gone fails with EPIPE instead of raising SIGPIPE. It owns both ends and
/// closes them when the last holder lets it go.
package final class WakeChannel: Sendable {
    /// The end to poll for `.readable`.
    package let descriptor: Int32
    private let writer: Int32

    package init() throws(Errno) {
        var ends: [Int32] = [-1, -1]
        _ = try SystemCall.retrying { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) }
        do {
            for end in ends { try SystemCall.setNonBlocking(end) }
        } catch {
            for end in ends { SystemCall.close(end) }
            throw error
        }
        descriptor = ends[0]
        writer = ends[1]
    }

    deinit {
        SystemCall.close(descriptor)
        SystemCall.close(writer)
    }

    /// Makes `descriptor` readable. A full channel is already readable, so a failure changes nothing.
    package func wake() {
        let byte: UInt8 = 1
        _ = withUnsafeBytes(of: byte) { raw in Result { () throws(Errno) in try SystemCall.write(writer, raw) } }
    }

    /// Reads every pending wake, so the next poll waits again.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while case .success(let count) = buffer.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try SystemCall.read(descriptor, into: raw) } }),
            count > 0
        {}
    }
}
