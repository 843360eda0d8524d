// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A path to a controller: send command packets, receive the controller's packets. Every H4 byte
/// stream (UART, unix, TCP) and the kernel's user channel implement it.
public protocol HCITransport: Sendable {
    /// Sends one complete H4 packet (type byte first).
    func send(_ packet: [UInt8]) throws(HCITransportError)
    /// The controller's packets, until the transport closes or fails.
    var packets: AsyncThrowingStream<H4Framer.Packet, any Error> { get }
    /// Closes the transport; `packets` then finishes.
    func close()
}

public struct HCITransportError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32
    public var detail: String

    public init(operation: String, errno: Int32, detail: String) {
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    /// A failed system call: `code` is its errno, read by the caller right after the call (a
    /// `close` in between may change errno), and the detail is the system's words for it.
    public init(operation: String, code: Int32) {
        self.init(operation: operation, errno: code, detail: String(cString: strerror(code)))
    }

    public var description: String { "\(operation): \(detail)" }
}
