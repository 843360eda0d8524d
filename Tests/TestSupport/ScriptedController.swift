// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
package import HCI
import Synchronization

/// The far end of a socketpair, answering commands from a script: for each command it receives, the
/// script returns the H4 packets to send back (none to stay silent). Unit tests drive the real
/// transport and driver with it; the integration tests use Bumble's controllers.
package final class ScriptedController: @unchecked Sendable {
    // @unchecked: `fd` is written in init, read by the one thread, closed in deinit after it stops.
    package let transport: FileDescriptorTransport
    private let fd: Int32
    private let received = Mutex<[HCICommand]>([])
    private let script: @Sendable (HCICommand) -> [[UInt8]]

    /// - Parameter hangUpOn: ends the connection, instead of answering, when this command arrives.
    package init(hangUpOn: HCIOpcode? = nil, script: @escaping @Sendable (HCICommand) -> [[UInt8]]) throws {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { throw POSIXError(.EIO) }
        fd = ends[1]
        self.script = script
        transport = try FileDescriptorTransport(owning: ends[0], description: "socketpair")
        let thread = Thread { [fd, weak self] in
            var framer = H4Framer()
            var buffer = [UInt8](repeating: 0, count: 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if count <= 0 { return }
                guard let packets = try? framer.append(buffer[0..<count]) else { return }
                for packet in packets where packet.type == .command {
                    let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
                    let command = HCICommand(opcode, Array(packet.bytes[3...]))
                    guard let self else { return }
                    self.received.withLock { $0.append(command) }
                    if command.opcode == hangUpOn {
                        shutdown(fd, Int32(SHUT_RDWR))
                        return
                    }
                    for reply in self.script(command) { self.write(reply) }
                }
            }
        }
        thread.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    package var commands: [HCICommand] { received.withLock { $0 } }

    /// Sends raw bytes to the host, as the controller.
    package func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Ends the connection from the controller's side.
    package func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// `04 0e ...`: Command Complete with a status and return parameters.
    package static func complete(_ opcode: HCIOpcode, status: UInt8 = 0, _ parameters: [UInt8] = []) -> [UInt8] {
        let body: [UInt8] = [1, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), status] + parameters
        return [0x04, 0x0E, UInt8(body.count)] + body
    }

    /// `04 3e ...`: an LE Advertising Report of one GAEN frame (ADV_NONCONN_IND, random address,
    /// RSSI -60) whose RPI is `index` four times over, as testbed/report_flood.py sends them.
    package static func gaenReport(_ index: UInt32) -> [UInt8] {
        let rpi = (0..<4).flatMap { _ in [UInt8(index >> 24), UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)] }
        let data: [UInt8] = [0x02, 0x01, 0x1A, 0x03, 0x03, 0x6F, 0xFD, 0x17, 0x16, 0x6F, 0xFD] + rpi + [0x72, 0x03, 0x38, 0x74]
        let body: [UInt8] = [0x02, 0x01, 0x03, 0x01, UInt8(index & 0xFF), 1, 2, 3, 4, 0xC5, UInt8(data.count)] + data + [0xC4]
        return [0x04, 0x3E, UInt8(body.count)] + body
    }

    /// What a working controller answers to the initialization sequence.
    package static func standard(_ command: HCICommand) -> [[UInt8]] {
        switch command.opcode {
        case .readLocalVersionInformation: return [complete(command.opcode, [0x0B, 0x00, 0x00, 0x0B, 0x5F, 0x00, 0x00, 0x00])]
        case .leReadLocalSupportedFeatures: return [complete(command.opcode, [0xFF, 0x1F, 0, 0, 0, 0, 0, 0])]
        case .leReadAdvertisingChannelTxPower: return [complete(command.opcode, [0xF9])]
        default: return [complete(command.opcode)]
        }
    }
}
