// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The radio's settings (configuration keys and command-line options of the same names).
package struct RadioSettings: Hashable, Sendable {
    /// Seconds a scan window lasts (default 4).
    package var scanWindowSeconds: Double = 4
    /// Seconds between windows, drawn anew each time; `nil` scans continuously.
    package var scanInterval: ClosedRange<Int>? = 210...300
    /// Seconds between rotations, drawn anew each time (default 600–1200).
    package var rotationInterval: ClosedRange<Int> = 600...1200
    /// Advertising interval in 0.625 ms units: 200–270 ms.
    package var advertisingInterval: ClosedRange<UInt16> = 0x0140...0x01B0
    /// TX power for the metadata, dBm; `nil` takes the controller's advertising TX power.
    package var txPower: Int8?
    /// Added to every RSSI before it is logged, dB (the receiver's calibration).
    package var rssiCorrection: Int = 0
    package var calibrationConfidence: CalibrationConfidence = .lowest

    package init() {}
}
