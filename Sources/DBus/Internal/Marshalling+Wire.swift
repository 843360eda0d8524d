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
}
