// SPDX-License-Identifier: GPL-3.0-or-later

/// Cuts an H4 byte stream (UART, unix or TCP socket) into packets: one type byte, then a header whose
/// length field says how much follows. The one framing code path for every byte-stream transport.
package struct H4Framer: Sendable {
    package enum PacketType: UInt8, Sendable {
        case command = 0x01
        case acl = 0x02
        case sco = 0x03
        case event = 0x04
        case iso = 0x05
    }

    package struct Packet: Hashable, Sendable {
        package var type: PacketType
        /// The packet without its type byte (header and payload).
        package var bytes: [UInt8]
    }

    /// A byte that cannot start a packet: the stream is out of step and must be reset.
    package struct Desynchronized: Error, Equatable, Sendable, CustomStringConvertible {
        package var byte: UInt8
        package init(byte: UInt8) { self.byte = byte }
        package var description: String { "H4 stream out of step: 0x\(String(byte, radix: 16)) is not a packet type" }
    }

    private var buffer: [UInt8] = []

    package init() {}

    /// Adds received bytes and returns every packet now complete, in order.
    package mutating func append(_ bytes: some Sequence<UInt8>) throws(Desynchronized) -> [Packet] {
        buffer.append(contentsOf: bytes)
        var packets = [Packet]()
        var start = 0
        while start < buffer.count {
            guard let type = PacketType(rawValue: buffer[start]) else {
                let byte = buffer[start]
                buffer.removeAll()
                throw Desynchronized(byte: byte)
            }
            let (headerSize, lengthOf): (Int, ([UInt8], Int) -> Int) =
                switch type {
                case .command: (3, { b, o in Int(b[o + 2]) })
                case .acl: (4, { b, o in Int(b[o + 2]) | Int(b[o + 3]) << 8 })
                case .sco: (3, { b, o in Int(b[o + 2]) })
                case .event: (2, { b, o in Int(b[o + 1]) })
                case .iso: (4, { b, o in (Int(b[o + 2]) | Int(b[o + 3]) << 8) & 0x3FFF })
                }
            let body = start + 1
            guard buffer.count - body >= headerSize else { break }
            let total = headerSize + lengthOf(buffer, body)
            guard buffer.count - body >= total else { break }
            packets.append(Packet(type: type, bytes: Array(buffer[body..<(body + total)])))
            start = body + total
        }
        buffer.removeFirst(start)
        return packets
    }

    /// Drops any partial packet (after the transport reconnects).
    package mutating func reset() { buffer.removeAll() }
}
