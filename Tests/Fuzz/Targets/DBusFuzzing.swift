// SPDX-License-Identifier: GPL-3.0-or-later

import BlueZ
import DBus

/// D-Bus messages as a connection receives them: libdbus's loader, our decoding, then what the
/// BlueZ back end makes of bluetoothd's signals and of its GetManagedObjects answer.
enum DBusFuzzing {
    static let adapterPath = "/org/bluez/hci0"

    /// One or more messages back to back in the wire format, read in order by one interpreter, so
    /// that a device announced by one signal can be changed by the next.
    @Sendable static func message(_ bytes: [UInt8]) {
        var interpreter = BlueZSignalInterpreter(adapterPath: adapterPath)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + (messageLength(bytes[start...]) ?? bytes.count))
            if let message = try? DBusMessage(wireBytes: Array(bytes[start..<end])) {
                read(message)
                _ = interpreter.handle(message)
            }
            start = end
        }
    }

    /// What code that receives a message reads of it: its description (logged), its error, the
    /// typed arguments the exported objects check, and the adapter state as the BlueZ back end reads
    /// it from GetManagedObjects.
    static func read(_ message: DBusMessage) {
        _ = message.description
        _ = message.error
        _ = try? message.arguments("a{sv}")
        for value in message.body {
            _ = BlueZSignalInterpreter.adapterState(in: value, adapterPath: adapterPath)
            _ = value.bytes
            _ = value.strings
            _ = value.stringKeyed
        }
    }

    /// The length the header of the message at the start of `bytes` declares: the 16-byte fixed
    /// header, the header fields padded to 8, and the body (specification, "Message Format").
    static func messageLength(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 16 else { return nil }
        let base = bytes.startIndex
        let bigEndian = bytes[base] == UInt8(ascii: "B")
        func uint32(_ offset: Int) -> Int {
            let b = (0..<4).map { Int(bytes[base + offset + $0]) }
            return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
        }
        let fields = uint32(12)
        return 16 + (fields + 7) / 8 * 8 + uint32(4)
    }
}
