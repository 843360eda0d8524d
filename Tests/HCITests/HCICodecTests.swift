// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCore
import HCI
import Testing

/// Commands and events against the exact bytes recorded with Bumble's controller and raw H4 clients
/// (shared/reference/test-peers.md §1.5).
@Suite(.ownThreads) struct HCICodecTests {
    static let rpi = "8be6cd371c5c891604bfbe49df845096"
    static let aem = "72033874"

    @Test func commandsHaveTheirRecordedBytes() throws {
        #expect(Hex.encode(HCICommand.reset.h4) == "01030c00")
        let address = try #require(BluetoothAddress(Hex.decode("3a5b7c9d1e2f")))
        #expect(Hex.encode(HCICommand.leSetRandomAddress(address).h4) == "010520062f1e9d7c5b3a")
        let parameters = HCICommand.leSetAdvertisingParameters(
            minimumInterval: 0x0140, maximumInterval: 0x0140, type: .nonConnectableUndirected, ownAddressRandom: true)
        #expect(Hex.encode(parameters.h4) == "0106200f400140010301000000000000000700")
        let frame = try Hex.decode("02011a03036ffd17166ffd" + Self.rpi + Self.aem)
        #expect(Hex.encode(HCICommand.leSetAdvertisingData(frame).h4) == "010820201f" + "02011a03036ffd17166ffd" + Self.rpi + Self.aem)
        #expect(Hex.encode(HCICommand.leSetAdvertisingEnable(true).h4) == "010a200101")
        #expect(Hex.encode(HCICommand.leSetScanParameters(active: false, interval: 0x60, window: 0x60).h4) == "010b2007006000600000" + "00")
        #expect(Hex.encode(HCICommand.leSetScanEnable(true, filterDuplicates: false).h4) == "010c20020100")
        // A short frame is zero-padded to the 31 bytes the command always carries.
        #expect(HCICommand.leSetAdvertisingData([1, 2]).parameters.count == 32)
        #expect(HCIOpcode.leSetScanEnable.ogf == 0x08 && HCIOpcode.leSetScanEnable.ocf == 0x000C)
    }

    @Test func commandCompleteAndStatus() throws {
        let complete = try HCIEvent(packet: Hex.decode("0e0401030c00"))
        #expect(complete == .commandComplete(allowedPackets: 1, opcode: .reset, returnParameters: [0]))
        #expect(complete.completionStatus == .success)
        let disallowed = try HCIEvent(packet: Hex.decode("0e040105200c"))
        #expect(disallowed.completionStatus == .commandDisallowed)
        #expect(
            try HCIEvent(packet: Hex.decode("0f04120106 20".replacing(" ", with: "")))
                == .commandStatus(status: .invalidParameters, allowedPackets: 1, opcode: .leSetAdvertisingParameters))
        #expect(try HCIEvent(packet: Hex.decode("100103")) == .hardwareError(code: 3))
        #expect("\(HCIStatus.commandDisallowed)" == "command disallowed (0x0c)")
    }

    @Test func legacyReportOfAnAndroidFrame() throws {
        let data = "03036ffd17166ffd" + Self.rpi + Self.aem  // no Flags, as Android sends it
        let packet = "3e" + "28" + "02" + "01" + "02" + "01" + "2f1e9d7c5b3a" + "1c" + data + "c4"
        let event = try HCIEvent(packet: Hex.decode(packet))
        guard case .advertisingReports(let reports) = event else { Issue.record("\(event)"); return }
        #expect(reports.count == 1)
        #expect(reports[0].eventType == 2)  // ADV_SCAN_IND
        #expect(!reports[0].extended)
        #expect(reports[0].addressType == 1)
        #expect(reports[0].address.description == "3A:5B:7C:9D:1E:2F")
        #expect(reports[0].rssi == -60)
        let payload = try #require(try ExposureNotificationPayload(parsing: reports[0].data))
        #expect(payload.rpi.description == Self.rpi)
    }

    @Test func extendedReportOfALegacyNonConnectableAdvertisement() throws {
        let data = "02011a03036ffd17166ffd" + Self.rpi + Self.aem
        let report = "1000" + "01" + "2f1e9d7c5b3a" + "01" + "00" + "ff" + "7f" + "b5" + "0000" + "00" + "000000000000" + "1f" + data
        let packet = "3e" + String(UInt8(2 + report.count / 2), radix: 16) + "0d" + "01" + report
        let event = try HCIEvent(packet: Hex.decode(packet))
        guard case .advertisingReports(let reports) = event else { Issue.record("\(event)"); return }
        #expect(reports[0].extended)
        #expect(reports[0].eventType == 0x10)
        #expect(reports[0].rssi == -75)
        #expect(reports[0].txPower == 127)
        #expect(!reports[0].isScanResponse)
        #expect(reports[0].data.count == 31)
    }

    static let lies: [(String, HCIParseError)] = [
        ("0e", .truncated(what: "event header", needed: 1, available: 0)),
        ("0e0101", .truncated(what: "Command Complete", needed: 2, available: 0)),
        ("0e0201", .lengthMismatch(declared: 2, actual: 1)),
        ("3e0302" + "00" + "00", .invalidReportCount(0)),
        ("3e0c02010301" + "2f1e9d7c5b3a" + "05" + "00", .truncated(what: "report data", needed: 5, available: 1)),
        ("3e0b02010301" + "2f1e9d7c5b3a" + "00", .truncated(what: "report RSSI", needed: 1, available: 0)),
    ]

    @Test func truncatedAndLyingEventsAreErrorsNotCrashes() throws {
        for (hex, expected) in Self.lies {
            #expect(throws: expected) { try HCIEvent(packet: Hex.decode(hex)) }
        }
        #expect(throws: HCIParseError.lengthMismatch(declared: 5, actual: 3)) { try HCIEvent(packet: Hex.decode("0e0501030c")) }
        // Every prefix and many mutations of a real report: parsed or refused, never a trap.
        let real = try Hex.decode("3e280201020" + "1" + "2f1e9d7c5b3a" + "1c" + "03036ffd17166ffd" + Self.rpi + Self.aem + "c4")
        var generator = SplitMix64(seed: 99)
        var outcomes = (parsed: 0, refused: 0)
        for _ in 0..<20_000 {
            var bytes = real
            for _ in 0..<Int(generator.next() % 3 + 1) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            let cut = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count + 1))))
            if (try? HCIEvent(packet: cut)) != nil { outcomes.parsed += 1 } else { outcomes.refused += 1 }
        }
        #expect(outcomes.parsed > 0 && outcomes.refused > 0)
    }

    @Test func theFramerCutsAStreamIntoPackets() throws {
        var framer = H4Framer()
        let complete = try Hex.decode("040e0401030c00")
        let report = try Hex.decode("043e280201020" + "1" + "2f1e9d7c5b3a" + "1c" + "03036ffd17166ffd" + Self.rpi + Self.aem + "c4")
        let stream = complete + report + complete
        // Fed one byte at a time, then all at once: the same packets.
        var oneByOne = [H4Framer.Packet]()
        for byte in stream { oneByOne += try framer.append([byte]) }
        var whole = H4Framer()
        let atOnce = try whole.append(stream)
        #expect(oneByOne == atOnce)
        #expect(atOnce.map(\.type) == [.event, .event, .event])
        #expect(atOnce[1].bytes == Array(report.dropFirst()))
        // ACL data is framed by its 16-bit length and passed over.
        var acl = H4Framer()
        #expect(try acl.append([0x02, 0x01, 0x20, 0x03, 0x00, 9, 9, 9] + complete).map(\.type) == [.acl, .event])
        // A byte that starts no packet resets the stream.
        var lost = H4Framer()
        #expect(throws: H4Framer.Desynchronized(byte: 0x77)) { try lost.append([0x77, 0x04]) }
        #expect(try lost.append(complete).count == 1)
    }

    @Test func nonResolvablePrivateAddressesHaveTheirTopBitsClear() {
        var generator = SplitMix64(seed: 5)
        for _ in 0..<1000 {
            let random = (0..<6).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let address = BluetoothAddress.nonResolvablePrivate(random: random)
            #expect(address.bytes[0] & 0xC0 == 0)
            #expect(address.bytes != [0, 0, 0, 0, 0, 0])
        }
        #expect(BluetoothAddress.nonResolvablePrivate(random: [0xC0, 0, 0, 0, 0, 0]).bytes == [0, 0, 0, 0, 0, 1])
    }
}

@Suite(.ownThreads) struct ExtendedCommandTests {
    @Test func extendedCommandsHaveTheirSpecifiedLayout() throws {
        let parameters = HCICommand.leSetExtendedAdvertisingParameters(handle: 0, minimumInterval: 0x0140, maximumInterval: 0x01B0)
        #expect(parameters.parameters.count == 25)
        #expect(
            Hex.encode(parameters.h4) == "01362019" + "00" + "1000" + "400100" + "b00100" + "07" + "01" + "00" + "000000000000" + "00" + "7f" + "01" + "00"
                + "01" + "00" + "00")
        let address = try #require(BluetoothAddress(Hex.decode("3a5b7c9d1e2f")))
        #expect(Hex.encode(HCICommand.leSetAdvertisingSetRandomAddress(handle: 0, address).h4) == "0135200700" + "2f1e9d7c5b3a")
        #expect(Hex.encode(HCICommand.leSetExtendedAdvertisingData(handle: 0, [1, 2]).h4) == "013720060003010201" + "02")
        #expect(Hex.encode(HCICommand.leSetExtendedAdvertisingEnable(true, handle: 0).h4) == "01392006010100000000")
        #expect(Hex.encode(HCICommand.leSetExtendedScanParameters(interval: 0x60, window: 0x60).h4) == "0141200800000100" + "6000" + "6000")
        #expect(Hex.encode(HCICommand.leSetExtendedScanEnable(true, filterDuplicates: false).h4) == "014220060100" + "00000000")
    }
}
