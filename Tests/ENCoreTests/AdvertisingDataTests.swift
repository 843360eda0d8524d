// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Testing

@Suite struct AdvertisingDataTests {
    // The payload examples of the vector file (interval 0 of the official key).
    static let rpi = "8be6cd371c5c891604bfbe49df845096"
    static let aem = "72033874"
    static let withFlags = "02011a03036ffd17166ffd" + rpi + aem
    static let withoutFlags = "03036ffd17166ffd" + rpi + aem

    static func payload() throws -> ExposureNotificationPayload {
        ExposureNotificationPayload(
            rpi: RollingProximityIdentifier(try Bytes16(hex: rpi)),
            aem: try #require(AssociatedEncryptedMetadata(Hex.decode(aem))))
    }

    @Test func buildsTheThirtyOneByteFrame() throws {
        let frame = try Self.payload().advertisingData()
        #expect(frame.count == 31)
        #expect(Hex.encode(frame) == Self.withFlags)
        #expect(Hex.encode(try Self.payload().advertisingData(includingFlags: false)) == Self.withoutFlags)
    }

    @Test(arguments: [withFlags, withoutFlags, withoutFlags + "00000000"])
    func parsesIOSAndAndroidFrames(hex: String) throws {
        let payload = try #require(try ExposureNotificationPayload(parsing: Hex.decode(hex)))
        #expect(payload == (try Self.payload()))
    }

    @Test func serviceDataAloneIsEnough() throws {
        // No UUID list, other structures around it: still GAEN.
        let frame = "050941424344" + "020a08" + "17166ffd" + Self.rpi + Self.aem
        let data = try AdvertisingData(parsing: Hex.decode(frame))
        #expect(data.structures.count == 3)
        #expect(try ExposureNotificationPayload(advertisingData: data) == (try Self.payload()))
    }

    @Test func otherServicesAreNotGAEN() throws {
        // Service data of 0xFE9F (another service) and a UUID list naming FD6F without service data.
        #expect(try ExposureNotificationPayload(parsing: Hex.decode("03036ffd0716 9ffe01020304".replacing(" ", with: ""))) == nil)
        #expect(try ExposureNotificationPayload(parsing: []) == nil)
        #expect(try AdvertisingData(parsing: Hex.decode("03036ffd")).serviceUUIDs16 == [0xFD6F])
    }

    static let malformed: [(String, AdvertisingDataError)] = [
        // Length runs past the end.
        ("03036ffd18166ffd" + rpi + aem, AdvertisingDataError.truncatedStructure(offset: 4, declaredLength: 24, available: 23)),
        ("05", .truncatedStructure(offset: 0, declaredLength: 5, available: 0)),
        ("02011a03036f", .truncatedStructure(offset: 3, declaredLength: 3, available: 2)),
        // Service data without room for its UUID.
        ("02166f", .serviceDataTooShort(offset: 0, length: 1)),
        // GAEN service data one byte short and one byte long.
        ("16166ffd" + rpi + "720338", .exposureNotificationServiceDataLength(offset: 0, length: 19)),
        ("18166ffd" + rpi + aem + "00", .exposureNotificationServiceDataLength(offset: 0, length: 21)),
        ("03166ffd", .exposureNotificationServiceDataLength(offset: 0, length: 0)),
        // Two GAEN payloads in one frame.
        ("17166ffd" + rpi + aem + "17166ffd" + rpi + aem, .duplicateExposureNotificationServiceData(offset: 24)),
    ]

    @Test(arguments: malformed)
    func malformedFramesAreTypedErrors(hex: String, expected: AdvertisingDataError) {
        #expect(throws: expected) { try ExposureNotificationPayload(parsing: Hex.decode(hex)) }
    }

    @Test func zeroLengthEndsTheSignificantPart() throws {
        // Early termination, then padding that would be malformed if read.
        let data = try AdvertisingData(parsing: Hex.decode("02011a00ff"))
        #expect(data.structures == [ADStructure(type: .flags, data: [0x1A])])
    }

    @Test func extendedAdvertisingDataOfAnyLengthParses() throws {
        let long = [UInt8](repeating: 0xAB, count: 250)
        let frame = ADStructure(type: .manufacturerSpecificData, data: long).encoded + (try Self.payload().advertisingData())
        let data = try AdvertisingData(parsing: frame)
        #expect(data.structures.count == 4)
        #expect(data.encoded == frame)
    }

    @Test func everyPrefixAndRandomFrameParsesOrThrowsNeverCrashes() throws {
        let frame = try Hex.decode(Self.withFlags)
        for length in 0...frame.count {
            _ = try? ExposureNotificationPayload(parsing: frame.prefix(length))
        }
        var generator = SplitMix64(seed: 0x6A65_6E64)
        var outcomes = (gaen: 0, notGAEN: 0, errors: 0)
        for _ in 0..<20_000 {
            var bytes = frame
            // Mutate a few bytes, sometimes the lengths, and cut the frame somewhere.
            for _ in 0..<Int(generator.next() % 4 + 1) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            let input = Array(bytes.prefix(Int(generator.next() % 32)))
            do {
                let data = try AdvertisingData(parsing: input)
                // What parsed re-encodes to the significant part of the input: nothing is invented
                // or dropped, and only a zero length octet can end it early.
                let encoded = data.encoded
                #expect(Array(input.prefix(encoded.count)) == encoded)
                #expect(encoded.count == input.count || input[encoded.count] == 0)
                if try ExposureNotificationPayload(advertisingData: data) != nil {
                    outcomes.gaen += 1
                } else {
                    outcomes.notGAEN += 1
                }
            } catch {
                outcomes.errors += 1
            }
        }
        // The mutations reached every outcome, so the properties above were checked on each.
        #expect(outcomes.gaen > 0 && outcomes.notGAEN > 0 && outcomes.errors > 0)
    }
}
