// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
public import HCI

/// What the advertiser and scanner need from a radio back end. `HCIRadio` drives a controller
/// over HCI (kernel user channel, UART, sockets); the BlueZ back end implements the same calls
/// over D-Bus. Sightings reach the scanner as `AdvertisingReport`s from the back end's own source.
public protocol Radio: Sendable {
    /// The TX power the radio reports for advertising, used when none is configured.
    var advertisingTxPower: Int8 { get async }
    /// Puts `data` on the air from `address`, non-connectable and undirected, every `interval`
    /// (0.625 ms units), replacing what was advertised as one transaction: an RPI is never sent
    /// from two addresses, nor an address with two RPIs.
    func advertise(_ data: [UInt8], from address: BluetoothAddress, interval: ClosedRange<UInt16>) async throws
    func stopAdvertising() async throws
    /// Passive scanning, duplicates not filtered.
    func startScanning() async throws
    /// Stops scanning; returns once the reports the radio made before stopping have been handed
    /// to the scanner, so they land in the window being closed.
    func stopScanning() async throws
}
