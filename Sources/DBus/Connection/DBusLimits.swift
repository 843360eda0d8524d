// SPDX-License-Identifier: GPL-3.0-or-later

/// What a connection accepts from its peers (issue 16). A message the connection does not route
/// (a call to nothing it exports, a signal no subscription wants, a reply nobody waits for) is
/// refused from its header, before its body is decoded; these limits bound the rest.
///
/// The largest messages gaend receives legitimately are bluetoothd's GetManagedObjects answer
/// (about 1 KB and 60 values a device: a few hundred devices stay far below 1 MiB and 100,000
/// values) and Manager1 calls: DetectExposures' and GetDailySummaries' configuration JSON (a few
/// KB) and AddTestResult's `a{sv}` (a few hundred bytes).
package struct DBusLimits: Sendable, Hashable {
    /// libdbus's `dbus_connection_set_max_message_size`; nil leaves libdbus's own (128 MiB, so the
    /// bus's limit, 32 MiB on Debian's system bus, is what arrives). Not set by default: libdbus
    /// does not skip a longer message, it *disconnects* (measured: a 2 MB signal to a connection
    /// limited to 1 MiB, then `Disconnected`), so any local user could take gaend off the bus with
    /// one signal. The decoding budget below bounds the cost of a large message instead.
    package var maximumMessageSize: Int?
    /// libdbus's `dbus_connection_set_max_received_size`: received messages alive at once (bytes).
    /// Past it libdbus stops reading the socket until they are freed (back pressure, not an error),
    /// so at most one large message is held besides the one being read. 4 MiB.
    package var maximumReceivedSize: Int
    /// Values one message may decode into, each element of every array and dictionary counted
    /// (a byte of an `ay` is not a value; it counts in `maximumDecodedBytes`). 100,000 values are
    /// a few MB of Swift values.
    package var maximumDecodedValues: Int
    /// Bytes of strings and byte arrays one message may decode into. 4 MiB.
    package var maximumDecodedBytes: Int

    package init(
        maximumMessageSize: Int? = nil, maximumReceivedSize: Int = 4 << 20, maximumDecodedValues: Int = 100_000,
        maximumDecodedBytes: Int = 4 << 20
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.maximumReceivedSize = maximumReceivedSize
        self.maximumDecodedValues = maximumDecodedValues
        self.maximumDecodedBytes = maximumDecodedBytes
    }

    /// The defaults above.
    package static let standard = DBusLimits()
}
