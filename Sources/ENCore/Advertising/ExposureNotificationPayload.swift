// SPDX-License-Identifier: GPL-3.0-or-later

/// What a GAEN advertisement carries: an RPI and its AEM under the 0xFD6F service.
public struct ExposureNotificationPayload: Hashable, Sendable {
    /// The Exposure Notification Service UUID, 0xFD6F (little-endian on the air: 6F FD).
    public static let serviceUUID: UInt16 = 0xFD6F
    /// The UUID as it goes into a frame: two bytes, little-endian.
    public static let serviceUUIDBytes: [UInt8] = [UInt8(truncatingIfNeeded: serviceUUID), UInt8(truncatingIfNeeded: serviceUUID >> 8)]
    /// The UUID as four hexadecimal digits, `FD6F` (bluetoothd's short form in LEAdvertisement1).
    public static let serviceUUIDHex = String(serviceUUID, radix: 16, uppercase: true)
    /// The UUID in the Bluetooth base UUID, `0000fd6f-0000-1000-8000-00805f9b34fb`, as bluetoothd
    /// writes 16-bit UUIDs in ServiceData and UUIDs (Core Vol 3 Part B 2.5.1).
    public static let serviceUUID128 = "0000\(serviceUUIDHex.lowercased())-0000-1000-8000-00805f9b34fb"
    /// The Flags value of the frames in the captures on record: LE General Discoverable, plus the two
    /// "simultaneous LE and BR/EDR" bits that iOS sets.
    public static let flags: UInt8 = 0x1A

    public var rpi: RollingProximityIdentifier
    public var aem: AssociatedEncryptedMetadata

    public init(rpi: RollingProximityIdentifier, aem: AssociatedEncryptedMetadata) {
        self.rpi = rpi
        self.aem = aem
    }

    /// The service-data value: RPI then AEM, 20 bytes.
    public var serviceDataValue: [UInt8] { rpi.bytes.bytes + aem.array }

    /// The legacy advertising frame: `02 01 1A | 03 03 6F FD | 17 16 6F FD <RPI> <AEM>`, 31 bytes with
    /// the Flags structure or 28 without (as Android sends it).
    public func advertisingData(includingFlags: Bool = true) -> [UInt8] {
        var structures = [ADStructure]()
        if includingFlags {
            structures.append(ADStructure(type: .flags, data: [Self.flags]))
        }
        structures.append(ADStructure(type: .complete16BitServiceUUIDs, data: Self.serviceUUIDBytes))
        structures.append(ADStructure(type: .serviceData16BitUUID, data: Self.serviceUUIDBytes + serviceDataValue))
        return AdvertisingData(structures: structures).encoded
    }

    /// The GAEN payload in parsed advertising data, `nil` if it has no 0xFD6F service data.
    ///
    /// The frame is recognised by its service data alone: Android frames have no Flags and arrive as
    /// ADV_SCAN_IND, and the UUID list is not required. The service data must be exactly 20 bytes, as
    /// Apple's scanner requires: a shorter one has no AEM to score with, a longer one is not GAEN v1.x.
    public init?(advertisingData: AdvertisingData) throws(AdvertisingDataError) {
        var found: (offset: Int, value: [UInt8])?
        for entry in try advertisingData.serviceData16() where entry.uuid == Self.serviceUUID {
            if found != nil { throw .duplicateExposureNotificationServiceData(offset: entry.offset) }
            found = (entry.offset, entry.value)
        }
        guard let found else { return nil }
        guard found.value.count == 20 else {
            throw .exposureNotificationServiceDataLength(offset: found.offset, length: found.value.count)
        }
        rpi = RollingProximityIdentifier(Bytes16(found.value[0..<16])!)
        aem = AssociatedEncryptedMetadata(found.value[16..<20])!
    }

    /// The 0xFD6F service data as a back end hands it over without the frame around it (bluetoothd's
    /// ServiceData): exactly 20 bytes, RPI then AEM, else nil.
    public init?(serviceDataValue bytes: [UInt8]) {
        guard bytes.count == 20, let rpi = Bytes16(bytes[0..<16]), let aem = AssociatedEncryptedMetadata(bytes[16..<20]) else { return nil }
        self.init(rpi: RollingProximityIdentifier(rpi), aem: aem)
    }

    /// Parses raw advertising data and extracts the GAEN payload, `nil` if the frame is not GAEN.
    public init?(parsing bytes: some Collection<UInt8>) throws(AdvertisingDataError) {
        try self.init(advertisingData: AdvertisingData(parsing: bytes))
    }
}
