// SPDX-License-Identifier: GPL-3.0-or-later

package import DBus
import ENCore
import Synchronization

/// The org.bluez.LEAdvertisement1 object bluetoothd reads when the advertisement is registered
/// (GetManagedObjects on its path, then GetAll; it replies to RegisterAdvertisement only after).
/// Broadcast type: non-connectable, so the kernel advertises it from a non-resolvable private
/// address of its own.
package final class AdvertisementObject: Sendable {
    package static let path = "/org/gaend/advertisement0"

    struct Content {
        var serviceData: [UInt8] = []
        /// Milliseconds (bluetoothd reads these only when started with --experimental).
        var minimumInterval: UInt32 = 200
        var maximumInterval: UInt32 = 270
        var txPower: Int16?
    }

    private let content = Mutex(Content())
    private let releases: AsyncStream<Void>.Continuation
    /// One element each time bluetoothd calls Release (it dropped the advertisement).
    package let released: AsyncStream<Void>

    package init() {
        (released, releases) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    deinit { releases.finish() }

    /// Sets what the next registration advertises: the 20 bytes of RPI and AEM, the interval in
    /// 0.625 ms units.
    package func update(serviceData: [UInt8], interval: ClosedRange<UInt16>) {
        content.withLock {
            $0.serviceData = serviceData
            $0.minimumInterval = UInt32(interval.lowerBound) * 625 / 1000
            $0.maximumInterval = (UInt32(interval.upperBound) * 625 + 999) / 1000
        }
    }

    package var serviceData: [UInt8] { content.withLock { $0.serviceData } }

    /// The properties bluetoothd reads.
    var properties: [String: DBusValue] {
        let current = content.withLock { $0 }
        return [
            "Type": .string("broadcast"),
            "ServiceUUIDs": .strings([ExposureNotificationPayload.serviceUUIDHex]),
            "ServiceData": .properties([ExposureNotificationPayload.serviceUUIDHex: .bytes(current.serviceData)]),
            "MinInterval": .uint32(current.minimumInterval),
            "MaxInterval": .uint32(current.maximumInterval),
        ]
    }

    /// The object's interface table.
    package var interface: DBusInterface {
        func property(_ name: String, _ type: DBusType) -> DBusProperty {
            DBusProperty(name, type, emitsChanged: false) { [weak self] in
                guard let value = self?.properties[name] else { throw DBusError(.unknownObject, "the advertisement is gone") }
                return value
            }
        }
        return DBusInterface(
            name: BlueZNames.advertisement,
            methods: [
                DBusMethod("Release") { [weak self] _ in
                    self?.releases.yield()
                    return []
                }
            ],
            properties: [
                property("Type", .string), property("ServiceUUIDs", .array(.string)),
                property("ServiceData", .dictionary(key: .string, value: .variant)), property("MinInterval", .uint32),
                property("MaxInterval", .uint32),
            ])
    }

    /// Exports the object on `bus`. bluetoothd asks GetManagedObjects on the path first; without an
    /// object manager there, it reads the object with GetAll.
    package func export(on bus: DBusConnection) async throws(DBusError) {
        try await bus.export(Self.path, interfaces: [interface])
    }
}
