// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// What the advertiser and scanner need from a radio back end, in GAEN's terms: a payload to put
/// on the air, and (from the back end's own source) what it heard. `HCIRadio` encodes and parses
/// HCI at its edge; the BlueZ back end hands bluetoothd the service data and reads it back from
/// bluetoothd's signals, with no frame made or parsed in between.
package protocol BeaconRadio: Sendable {
    /// The TX power the radio reports for advertising, used when none is configured.
    var advertisingTxPower: Int8 { get async }
    /// Puts `payload` on the air from `address`, non-connectable and undirected, every `interval`
    /// (0.625 ms units), replacing what was advertised as one transaction: an RPI is never sent
    /// from two addresses, nor an address with two RPIs. Returns the address on the air when it is
    /// `address`; `nil` when the back end's host stack chooses its own (bluetoothd does).
    @discardableResult
    func advertise(_ payload: ExposureNotificationPayload, from address: BluetoothAddress, interval: ClosedRange<UInt16>) async throws
        -> BluetoothAddress?
    func stopAdvertising() async throws
    /// Passive scanning, duplicates not filtered.
    func startScanning() async throws
    /// Stops scanning; returns once the reports the radio made before stopping have been handed
    /// to the scanner, so they land in the window being closed.
    func stopScanning() async throws
}

/// One GAEN advertisement heard: its payload, how strongly, and from which address.
package struct Sighting: Hashable, Sendable {
    package var payload: ExposureNotificationPayload
    /// As the receiver measured it, before the configured correction.
    package var rssi: Int8
    package var address: BluetoothAddress

    package init(payload: ExposureNotificationPayload, rssi: Int8, address: BluetoothAddress) {
        self.payload = payload
        self.rssi = rssi
        self.address = address
    }
}

/// What a back end heard, as a scan window counts it: a GAEN sighting (from an advertisement or a
/// scan response), another frame, or a frame that claims to be GAEN but is malformed.
package enum RadioReport: Hashable, Sendable {
    case sighting(Sighting)
    case other
    case malformed
}
