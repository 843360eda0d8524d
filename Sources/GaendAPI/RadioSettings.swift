// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore

/// The radio's settings (configuration keys and command-line options of the same names).
public struct RadioSettings: Hashable, Sendable {
    /// Seconds a scan window lasts (default 4).
    public var scanWindowSeconds: Double = 4
    /// Seconds between windows, drawn anew each time; `nil` scans continuously.
    public var scanInterval: ClosedRange<Int>? = 210...300
    /// Seconds between rotations, drawn anew each time (default 600–1200).
    public var rotationInterval: ClosedRange<Int> = 600...1200
    /// Advertising interval in 0.625 ms units: 200–270 ms.
    public var advertisingInterval: ClosedRange<UInt16> = 0x0140...0x01B0
    /// TX power for the metadata, dBm; `nil` takes the controller's advertising TX power.
    public var txPower: Int8?
    /// Added to every RSSI before it is logged, dB (the receiver's calibration).
    public var rssiCorrection: Int = 0
    public var calibrationConfidence: CalibrationConfidence = .lowest

    public init() {}
}
