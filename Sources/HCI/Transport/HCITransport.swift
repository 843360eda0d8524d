// SPDX-License-Identifier: GPL-3.0-or-later

package import SystemCalls

/// A path to a controller: send command packets, receive the controller's packets. Every H4 byte
/// stream (UART, unix, TCP) and the kernel's user channel implement it.
package protocol HCITransport: Sendable {
    /// Sends one complete H4 packet (type byte first).
    func send(_ packet: [UInt8]) throws(HCITransportError)
    /// The controller's packets, until the transport closes or fails.
    var packets: AsyncThrowingStream<H4Framer.Packet, any Error> { get }
    /// Closes the transport; `packets` then finishes.
    func close()
}

/// A transport that failed: what it was doing, the system call's errno when one failed, and
/// words for what errno does not say.
package struct HCITransportError: Error, Equatable, Sendable, CustomStringConvertible {
    package var operation: String
    package var errno: Errno?
    package var detail: String?

    package init(operation: String, errno: Errno? = nil, detail: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    package var description: String {
        "\(operation): " + [errno?.description, detail].compactMap { $0 }.joined(separator: "; ")
    }
}
