// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import DBus
import Testing

@Suite(.ownThreads) struct DBusTypeTests {
    @Test(arguments: ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v", "ay", "a{sv}", "a{oa{sa{sv}}}", "(ybs)", "a(sa{sv})", "aay"])
    func signaturesRoundTrip(_ signature: String) throws {
        #expect(try DBusType(signature: signature).signature == signature)
    }

    @Test(arguments: ["", "z", "a", "a{vs}", "a{s}", "a{sss}", "()", "(s", "ss", "{sv}", String(repeating: "a", count: 33) + "y"])
    func badSignaturesAreRefused(_ signature: String) {
        #expect(throws: DBusError.self) { try DBusType(signature: signature) }
    }

    @Test func bodySignaturesSplitIntoCompleteTypes() throws {
        #expect(try DBusType.parse(signature: "oa{sv}s") == [.objectPath, .dictionary(key: .string, value: .variant), .string])
    }

    @Test func valuesThatLibdbusWouldAbortOnAreRefused() {
        #expect(throws: DBusError.self) { try DBusValue.objectPath("no/slash").validate() }
        #expect(throws: DBusError.self) { try DBusValue.objectPath("/trailing/").validate() }
        #expect(throws: DBusError.self) { try DBusValue.string("nul\u{0}inside").validate() }
        #expect(throws: DBusError.self) { try DBusValue.array(element: .string, [.int32(1)]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.signature("a{").validate() }
        #expect(throws: DBusError.self) { try DBusValue.structure([]).validate() }
        #expect(throws: Never.self) { try DBusValue.properties(["A": .bytes([1, 2])]).validate() }
    }

    @Test func namesFollowTheSpecification() {
        #expect(DBusNames.isValidObjectPath("/"))
        #expect(DBusNames.isValidObjectPath("/org/bluez/hci0/dev_3A_5B"))
        #expect(!DBusNames.isValidObjectPath("/org//bluez"))
        #expect(!DBusNames.isValidObjectPath("/org/blue-z"))
        #expect(DBusNames.isValidInterface("org.bluez.LEAdvertisement1"))
        #expect(!DBusNames.isValidInterface("bluez"))
        #expect(!DBusNames.isValidInterface("org.1bluez"))
        #expect(DBusNames.isValidBusName(":1.42"))
        #expect(DBusNames.isValidBusName("org.gaend"))
        #expect(!DBusNames.isValidBusName("org"))
        #expect(DBusNames.isValidMember("GetManagedObjects"))
        #expect(!DBusNames.isValidMember("Get.All"))
    }
}
