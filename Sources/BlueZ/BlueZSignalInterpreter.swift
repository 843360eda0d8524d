// SPDX-License-Identifier: GPL-3.0-or-later

package import DBus
import ENCore
package import Beacon

/// What bluetoothd's signals mean for the beacon: sightings of 0xFD6F advertisers on one adapter,
/// and that adapter's presence and power. Pure: fed the signals of org.bluez in arrival order.
///
/// bluetoothd announces a new device with InterfacesAdded and later reports of it with
/// PropertiesChanged; with a discovery filter set it sends RSSI with every report (src/device.c,
/// `device_set_rssi_with_delta`, threshold 0), ServiceData only when the bytes change. So a signal
/// carrying RSSI is one report, and the service data comes from what the device last had.
package struct BlueZSignalInterpreter: Sendable {
    package enum Event: Hashable, Sendable {
        case sighting(Sighting)
        case adapterPresent(Bool)
        case powered(Bool)
    }

    struct Device {
        var address: BluetoothAddress
        var serviceData: [UInt8]?
    }

    package let adapterPath: String
    private var devices: [String: Device] = [:]
    /// Signals that were not understood (wrong shape); counted, never fatal.
    package private(set) var malformed = 0
    /// Reports whose 0xFD6F service data was not 20 bytes (RPI and AEM).
    package private(set) var malformedServiceData = 0

    package init(adapterPath: String) {
        self.adapterPath = adapterPath
    }

    package var knownDevices: Int { devices.count }

    package mutating func handle(_ message: DBusMessage) -> [Event] {
        guard message.kind == .signal, let path = message.path else { return [] }
        switch (message.interface, message.member) {
        case (StandardInterfaces.objectManager?, "InterfacesAdded"?):
            guard message.signature == "oa{sa{sv}}", let object = message.body[0].objectPath, let interfaces = message.body[1].stringKeyed else {
                malformed += 1
                return []
            }
            if object == adapterPath, let adapter = interfaces[BlueZNames.adapter]?.stringKeyed {
                var events = [Event.adapterPresent(true)]
                if let powered = adapter["Powered"]?.variant?.boolean { events.append(.powered(powered)) }
                return events
            }
            guard object.hasPrefix(adapterPath + "/"), let properties = interfaces[BlueZNames.device]?.stringKeyed else { return [] }
            return deviceAdded(object, properties)
        case (StandardInterfaces.objectManager?, "InterfacesRemoved"?):
            guard message.signature == "oas", let object = message.body[0].objectPath, let names = message.body[1].strings else {
                malformed += 1
                return []
            }
            if object == adapterPath, names.contains(BlueZNames.adapter) {
                devices.removeAll()
                return [.adapterPresent(false)]
            }
            if names.contains(BlueZNames.device) { devices[object] = nil }
            return []
        case (StandardInterfaces.properties?, "PropertiesChanged"?):
            guard message.signature == "sa{sv}as", let interface = message.body[0].string, let changed = message.body[1].stringKeyed else {
                malformed += 1
                return []
            }
            if path == adapterPath, interface == BlueZNames.adapter {
                return changed["Powered"]?.variant?.boolean.map { [.powered($0)] } ?? []
            }
            guard interface == BlueZNames.device, path.hasPrefix(adapterPath + "/") else { return [] }
            return deviceChanged(path, changed)
        default:
            return []
        }
    }

    /// The adapter's state in GetManagedObjects' answer (read when bluetoothd appears).
    package static func adapterState(in objects: DBusValue, adapterPath: String) -> [Event] {
        guard let adapter = objects.pathKeyed?[adapterPath]?.stringKeyed?[BlueZNames.adapter]?.stringKeyed else {
            return [.adapterPresent(false)]
        }
        return [.adapterPresent(true), .powered(adapter["Powered"]?.variant?.boolean ?? false)]
    }

    private mutating func deviceAdded(_ path: String, _ properties: [String: DBusValue]) -> [Event] {
        guard let text = properties["Address"]?.variant?.string, let address = BluetoothAddress(string: text) else {
            malformed += 1
            return []
        }
        let device = Device(
            address: address, serviceData: Self.exposureNotificationData(properties))
        devices[path] = device
        return report(device, properties)
    }

    private mutating func deviceChanged(_ path: String, _ changed: [String: DBusValue]) -> [Event] {
        guard var device = devices[path] else { return [] }
        if changed["ServiceData"] != nil { device.serviceData = Self.exposureNotificationData(changed) }
        devices[path] = device
        return report(device, changed)
    }

    /// A sighting when the signal carries RSSI and the device has 0xFD6F service data; devices of
    /// other services are not GAEN and are ignored. The service data is the payload itself (RPI and
    /// AEM): nothing is framed to be parsed again. Service data of the wrong length is counted as
    /// malformed, as the HCI edge counts such a frame.
    private mutating func report(_ device: Device, _ properties: [String: DBusValue]) -> [Event] {
        guard let serviceData = device.serviceData, let rssi = properties["RSSI"]?.variant?.int16 else { return [] }
        guard let payload = ExposureNotificationPayload(serviceDataValue: serviceData) else {
            malformedServiceData += 1
            return []
        }
        return [.sighting(Sighting(payload: payload, rssi: Int8(clamping: rssi), address: device.address))]
    }

    private static func exposureNotificationData(_ properties: [String: DBusValue]) -> [UInt8]? {
        guard let entries = properties["ServiceData"]?.variant?.stringKeyed else { return nil }
        for (uuid, value) in entries where uuid.lowercased() == BlueZNames.exposureNotificationUUID {
            // At most a legacy PDU's worth: anything longer is not from a real advertisement.
            if let bytes = value.variant?.bytes, bytes.count <= 27 { return bytes }
        }
        return nil
    }
}
