// SPDX-License-Identifier: GPL-3.0-or-later

/// Why advertising data could not be read. Every case names the byte offset, so a capture can be
/// checked by hand.
public enum AdvertisingDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An AD structure's length octet claims more bytes than remain.
    case truncatedStructure(offset: Int, declaredLength: Int, available: Int)
    /// Service data too short to hold its own 16-bit UUID.
    case serviceDataTooShort(offset: Int, length: Int)
    /// Service data for 0xFD6F whose value is not RPI (16) + AEM (4) bytes.
    case exposureNotificationServiceDataLength(offset: Int, length: Int)
    /// Two service-data structures for 0xFD6F in one frame: which one is meant cannot be known.
    case duplicateExposureNotificationServiceData(offset: Int)

    public var description: String {
        switch self {
        case .truncatedStructure(let offset, let declared, let available):
            return "AD structure at offset \(offset) declares \(declared) bytes but only \(available) remain"
        case .serviceDataTooShort(let offset, let length):
            return "service data at offset \(offset) has \(length) bytes, too short for a 16-bit UUID"
        case .exposureNotificationServiceDataLength(let offset, let length):
            return "0xFD6F service data at offset \(offset) carries \(length) bytes, expected 20 (RPI 16 + AEM 4)"
        case .duplicateExposureNotificationServiceData(let offset):
            return "second 0xFD6F service data structure at offset \(offset)"
        }
    }
}

/// Advertising or scan-response data: a sequence of AD structures.
public struct AdvertisingData: Hashable, Sendable {
    /// The structures with their byte offsets in the frame, in order.
    public var structures: [ADStructure]
    /// Offsets of each structure's length octet, parallel to `structures`.
    public var offsets: [Int]

    public init(structures: [ADStructure]) {
        self.structures = structures
        var offsets = [Int]()
        var offset = 0
        for structure in structures {
            offsets.append(offset)
            offset += structure.data.count + 2
        }
        self.offsets = offsets
    }

    /// Splits `bytes` into AD structures. A zero length octet ends the significant part (what follows
    /// is padding), as the Core Specification allows; a length running past the end is an error.
    /// Any length of data is accepted, so extended advertising data parses too.
    public init(parsing bytes: some Collection<UInt8>) throws(AdvertisingDataError) {
        let bytes = Array(bytes)
        var structures = [ADStructure]()
        var offsets = [Int]()
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            let available = bytes.count - offset - 1
            guard length <= available else {
                throw .truncatedStructure(offset: offset, declaredLength: length, available: available)
            }
            let type = ADType(rawValue: bytes[offset + 1])
            structures.append(ADStructure(type: type, data: Array(bytes[(offset + 2)..<(offset + 1 + length)])))
            offsets.append(offset)
            offset += 1 + length
        }
        self.structures = structures
        self.offsets = offsets
    }

    /// The frame on the air.
    public var encoded: [UInt8] { structures.flatMap(\.encoded) }

    /// The service data of every 16-bit UUID, as (offset, UUID, value).
    public func serviceData16() throws(AdvertisingDataError) -> [(offset: Int, uuid: UInt16, value: [UInt8])] {
        var result = [(offset: Int, uuid: UInt16, value: [UInt8])]()
        for (structure, offset) in zip(structures, offsets) where structure.type == .serviceData16BitUUID {
            guard structure.data.count >= 2 else {
                throw .serviceDataTooShort(offset: offset, length: structure.data.count)
            }
            let uuid = UInt16(structure.data[0]) | UInt16(structure.data[1]) << 8
            result.append((offset, uuid, Array(structure.data[2...])))
        }
        return result
    }

    /// The 16-bit service UUIDs listed in complete or incomplete lists.
    public var serviceUUIDs16: [UInt16] {
        structures.filter { $0.type == .complete16BitServiceUUIDs || $0.type == .incomplete16BitServiceUUIDs }
            .flatMap { structure in
                stride(from: 0, to: structure.data.count - 1, by: 2).map {
                    UInt16(structure.data[$0]) | UInt16(structure.data[$0 + 1]) << 8
                }
            }
    }
}
