// SPDX-License-Identifier: GPL-3.0-or-later

internal import CDBus

/// A message as bytes in the wire format, for the fuzz harness (Tests/Fuzz): it reaches the same
/// decoding a connection runs on every received message, without a bus. `package`, not public:
/// nothing outside this package needs D-Bus bytes.
extension DBusMessage {
    /// Loads `bytes` with libdbus's own message loader (which validates the header and body as it
    /// does for a socket), then decodes it as a connection does.
    package init(wireBytes bytes: [UInt8]) throws(DBusError) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let loaded = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32(clamping: $0.count), &error) }
        }
        guard let loaded else {
            let reason = error.message.map { String(cString: $0) } ?? "no reason given"
            throw DBusError(.invalidArgs, "not a D-Bus message: \(reason)")
        }
        defer { dbus_message_unref(loaded) }
        self = try Marshalling.decode(loaded)
    }

    /// The message in the wire format (serial 1 unless set), as libdbus would send it: for tests
    /// and fuzz seeds.
    package func wireBytes() throws(DBusError) -> [UInt8] {
        let pointer = try Marshalling.encode(self)
        defer { dbus_message_unref(pointer) }
        dbus_message_set_serial(pointer, serial == 0 ? 1 : serial)
        if let sender, DBusNames.isValidBusName(sender) { dbus_message_set_sender(pointer, sender) }
        var marshalled: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(pointer, &marshalled, &length) != 0, let marshalled else {
            throw DBusError(.noMemory, "dbus_message_marshal")
        }
        defer { dbus_free(marshalled) }
        return marshalled.withMemoryRebound(to: UInt8.self, capacity: Int(length)) { Array(UnsafeBufferPointer(start: $0, count: Int(length))) }
    }
}
