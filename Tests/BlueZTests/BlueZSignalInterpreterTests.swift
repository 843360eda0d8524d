// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import BlueZ
import DBus
import ENCore
import Beacon
import Testing

/// bluetoothd's signals, as the mock and bluetoothd 5.66 send them, read into sightings and adapter
/// state.
@Suite(.ownThreads) struct BlueZSignalInterpreterTests {
    static let device = "/org/bluez/hci0/dev_3A_5B_7C_9D_1E_2F"
    static let payload: [UInt8] = Array(0..<20)

    static func added(_ path: String, _ properties: [String: DBusValue]) -> DBusMessage {
        .signal(
            path: "/", interface: StandardInterfaces.objectManager, member: "InterfacesAdded",
            [
                .objectPath(path),
                .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), [.init(.string(BlueZNames.device), .properties(properties))]),
            ])
    }

    static func changed(_ path: String, _ interface: String, _ properties: [String: DBusValue]) -> DBusMessage {
        .signal(path: path, interface: StandardInterfaces.properties, member: "PropertiesChanged", [.string(interface), .properties(properties), .strings([])])
    }

    static func serviceData(_ bytes: [UInt8], uuid: String = BlueZNames.exposureNotificationUUID) -> DBusValue {
        .properties([uuid: .bytes(bytes)])
    }

    @Test func aNewDeviceAndItsLaterReportsAreSightings() throws {
        var interpreter = BlueZSignalInterpreter(adapterPath: "/org/bluez/hci0")
        let first = interpreter.handle(
            Self.added(
                Self.device,
                ["Address": .string("3A:5B:7C:9D:1E:2F"), "AddressType": .string("random"), "RSSI": .int16(-67), "ServiceData": Self.serviceData(Self.payload)])
        )
        guard case .sighting(let sighting)? = first.first else {
            Issue.record("no sighting: \(first)")
            return
        }
        #expect(sighting.rssi == -67)
        #expect(sighting.address.description == "3A:5B:7C:9D:1E:2F")
        // The service data is the payload as it was on the air: RPI, then AEM; no frame around it.
        #expect(sighting.payload.serviceDataValue == Self.payload)
        // RSSI alone: the service data is what the device last had.
        let second = interpreter.handle(Self.changed(Self.device, BlueZNames.device, ["RSSI": .int16(-71)]))
        #expect(second == [.sighting(Sighting(payload: sighting.payload, rssi: -71, address: sighting.address))])
        // New service data with the RSSI: the new payload.
        let third = interpreter.handle(
            Self.changed(Self.device, BlueZNames.device, ["RSSI": .int16(127), "ServiceData": Self.serviceData(Array(repeating: 9, count: 20))]))
        guard case .sighting(let changed)? = third.first else {
            Issue.record("no sighting: \(third)")
            return
        }
        #expect(changed.rssi == 127)
        #expect(changed.payload.serviceDataValue == Array(repeating: 9, count: 20))
        // Service data that is not 20 bytes is no payload: counted, not reported.
        #expect(
            interpreter.handle(
                Self.changed(Self.device, BlueZNames.device, ["RSSI": .int16(-60), "ServiceData": Self.serviceData(Array(repeating: 9, count: 19))])
            ).isEmpty)
        #expect(interpreter.malformedServiceData == 1)
        // Service data alone is not a report.
        #expect(interpreter.handle(Self.changed(Self.device, BlueZNames.device, ["ServiceData": Self.serviceData(Self.payload)])).isEmpty)
        // Removed: a later change of it is nobody's.
        _ = interpreter.handle(
            .signal(
                path: "/", interface: StandardInterfaces.objectManager, member: "InterfacesRemoved", [.objectPath(Self.device), .strings([BlueZNames.device])]))
        #expect(interpreter.knownDevices == 0)
        #expect(interpreter.handle(Self.changed(Self.device, BlueZNames.device, ["RSSI": .int16(-50)])).isEmpty)
    }

    @Test func otherServicesOtherAdaptersAndMalformedSignalsAreIgnored() {
        var interpreter = BlueZSignalInterpreter(adapterPath: "/org/bluez/hci0")
        let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"
        #expect(
            interpreter.handle(
                Self.added(
                    Self.device, ["Address": .string("3A:5B:7C:9D:1E:2F"), "RSSI": .int16(-60), "ServiceData": Self.serviceData([1, 2], uuid: heartRate)])
            ).isEmpty)
        #expect(interpreter.handle(Self.added(Self.device, ["Address": .string("3A:5B:7C:9D:1E:2F"), "RSSI": .int16(-60)])).isEmpty)
        #expect(
            interpreter.handle(
                Self.added(
                    "/org/bluez/hci1/dev_3A_5B_7C_9D_1E_2F",
                    ["Address": .string("3A:5B:7C:9D:1E:2F"), "RSSI": .int16(-60), "ServiceData": Self.serviceData(Self.payload)])
            ).isEmpty)
        // A ServiceData of the wrong shape (the stock template's aa{sv}) is no service data.
        #expect(
            interpreter.handle(
                Self.added(
                    Self.device,
                    [
                        "Address": .string("3A:5B:7C:9D:1E:2F"), "RSSI": .int16(-60),
                        "ServiceData": .array(element: .dictionary(key: .string, value: .variant), []),
                    ])
            ).isEmpty)
        // Wrong signatures are counted, not trusted.
        #expect(interpreter.handle(.signal(path: "/", interface: StandardInterfaces.objectManager, member: "InterfacesAdded", [.string("x")])).isEmpty)
        #expect(interpreter.handle(.signal(path: Self.device, interface: StandardInterfaces.properties, member: "PropertiesChanged", [.int32(1)])).isEmpty)
        #expect(interpreter.malformed == 2)
        // An address that is not one.
        #expect(
            interpreter.handle(Self.added(Self.device, ["Address": .string("nonsense"), "RSSI": .int16(-60), "ServiceData": Self.serviceData(Self.payload)]))
                .isEmpty)
        #expect(interpreter.malformed == 3)
    }

    @Test func theAdapterComesGoesAndPowers() {
        var interpreter = BlueZSignalInterpreter(adapterPath: "/org/bluez/hci0")
        let adapterAdded = DBusMessage.signal(
            path: "/", interface: StandardInterfaces.objectManager, member: "InterfacesAdded",
            [
                .objectPath("/org/bluez/hci0"),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [.init(.string(BlueZNames.adapter), .properties(["Powered": .boolean(true)]))]),
            ])
        #expect(interpreter.handle(adapterAdded) == [.adapterPresent(true), .powered(true)])
        #expect(
            interpreter.handle(Self.changed("/org/bluez/hci0", BlueZNames.adapter, ["Powered": .boolean(false), "Discovering": .boolean(false)])) == [
                .powered(false)
            ])
        #expect(interpreter.handle(Self.changed("/org/bluez/hci1", BlueZNames.adapter, ["Powered": .boolean(true)])).isEmpty)
        #expect(
            interpreter.handle(
                .signal(
                    path: "/", interface: StandardInterfaces.objectManager, member: "InterfacesRemoved",
                    [.objectPath("/org/bluez/hci0"), .strings([BlueZNames.adapter])]))
                == [.adapterPresent(false)])
        let managed = DBusValue.dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            [
                .init(
                    .objectPath("/org/bluez/hci0"),
                    .dictionary(
                        key: .string, value: .dictionary(key: .string, value: .variant),
                        [.init(.string(BlueZNames.adapter), .properties(["Powered": .boolean(true)]))]))
            ])
        #expect(BlueZSignalInterpreter.adapterState(in: managed, adapterPath: "/org/bluez/hci0") == [.adapterPresent(true), .powered(true)])
        #expect(
            BlueZSignalInterpreter.adapterState(
                in: .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)), []),
                adapterPath: "/org/bluez/hci0") == [.adapterPresent(false)])
    }
}
