// SPDX-License-Identifier: GPL-3.0-or-later

package import DBus
package import ENCore
package import Logging
import Beacon

/// `Radio` over bluetoothd: the advertisement registered with LEAdvertisingManager1 (unregistered and
/// registered again to change it), discovery with a 0xFD6F filter started and stopped for each scan
/// window (the kernel filters duplicates within a discovery session). Sightings arrive as signals
/// and are read by `BlueZSignalInterpreter`, not here. bluetoothd and the kernel choose the address:
/// `from:` is not used.
package actor BlueZRadio: BeaconRadio {

    private let bus: DBusConnection
    private let adapterPath: String
    private let advertisement: AdvertisementObject
    private let logger: Logger
    private let clock: any Clock<Duration>
    private let configuredTxPower: Int8
    private let drain: @Sendable () async -> Void
    private var registered = false
    /// Registration attempts before giving up, and the first wait between them (doubling).
    static let attempts = 5
    static let firstRetryDelay = Duration.milliseconds(250)

    package init(
        bus: DBusConnection, adapterPath: String, advertisement: AdvertisementObject, txPower: Int8 = 0,
        logger: Logger = Logger(label: "gaend.bluez"), clock: any Clock<Duration> = ContinuousClock(),
        drain: @escaping @Sendable () async -> Void = {}
    ) {
        self.drain = drain
        self.bus = bus
        self.adapterPath = adapterPath
        self.advertisement = advertisement
        self.configuredTxPower = txPower
        self.logger = logger
        self.clock = clock
    }

    /// bluetoothd does not say what power the controller advertises with; the `tx-power` setting
    /// (or 0 dBm) goes into the metadata.
    package var advertisingTxPower: Int8 { configuredTxPower }

    package var isRegistered: Bool { registered }

    /// bluetoothd called Release: the registration is gone.
    package func markReleased() { registered = false }

    /// bluetoothd chooses the address and makes the frame (Flags, the UUID list, the service data)
    /// from our LEAdvertisement1 object, which holds the service data alone.
    /// bluetoothd picks the address (a fresh random one per registration): ours is not used.
    @discardableResult
    package func advertise(_ payload: ExposureNotificationPayload, from address: BluetoothAddress, interval: ClosedRange<UInt16>) async throws
        -> BluetoothAddress?
    {
        if registered { try await unregister() }
        advertisement.update(serviceData: payload.serviceDataValue, interval: interval)
        try await register()
        return nil
    }

    package func stopAdvertising() async throws {
        guard registered else { return }
        try await unregister()
    }

    /// Registers the advertisement, retrying what bluetoothd may answer while it settles: a slot
    /// still held ("Maximum advertisements reached"), a registration of ours it still has
    /// (AlreadyExists), a failed read (Failed).
    private func register() async throws {
        var delay = Self.firstRetryDelay
        var lastError: DBusError?
        for attempt in 1...Self.attempts {
            do {
                _ = try await bus.call(
                    destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.advertisingManager, member: "RegisterAdvertisement",
                    // bluetoothd answers once it has read our object back, which it gives libdbus's
                    // default 25 s: waiting less made a slow read (a loaded machine) look like a
                    // refusal, and the retry then met our own pending registration (AlreadyExists).
                    [.objectPath(AdvertisementObject.path), .properties([:])], timeout: .seconds(30))
                registered = true
                if attempt > 1 { logger.notice("advertisement registered after retries", metadata: ["attempts": "\(attempt)"]) }
                return
            } catch let error as DBusError {
                lastError = error
                switch error.name.rawValue {
                case BlueZNames.Errors.alreadyExists, BlueZNames.Errors.notPermitted:
                    // Possibly our own registration from before: let it go first.
                    try? await unregister()
                case BlueZNames.Errors.failed, BlueZNames.Errors.inProgress, BlueZNames.Errors.notReady, DBusError.Name.noReply.rawValue:
                    break
                default:
                    throw BlueZRadioError.registration(error)
                }
                logger.warning(
                    "advertisement registration refused; retrying",
                    metadata: ["error": "\(error)", "attempt": "\(attempt)", "retryIn": "\(delay)"])
                try await clock.sleep(for: delay)
                delay *= 2
            }
        }
        throw BlueZRadioError.registration(lastError ?? DBusError(.failed, "no attempt made"))
    }

    private func unregister() async throws {
        registered = false
        do {
            _ = try await bus.call(
                destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.advertisingManager, member: "UnregisterAdvertisement",
                [.objectPath(AdvertisementObject.path)])
        } catch let error as DBusError where error.name.rawValue == BlueZNames.Errors.doesNotExist {
            // Already gone (bluetoothd restarted, or released it): what we wanted.
        }
    }

    /// Discovery with the GAEN filter. The filter is set every time: bluetoothd drops it when the
    /// adapter powers off.
    package func startScanning() async throws {
        let filter = DBusValue.properties([
            "Transport": .string("le"), "UUIDs": .strings([BlueZNames.exposureNotificationUUID]), "DuplicateData": .boolean(true),
        ])
        _ = try await bus.call(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "SetDiscoveryFilter", [filter])
        do {
            _ = try await bus.call(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StartDiscovery")
        } catch let error as DBusError where error.name.rawValue == BlueZNames.Errors.inProgress {
            // A session of ours survived (a window cut short): restart it, for a fresh duplicate filter.
            try await stopScanning()
            _ = try await bus.call(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StartDiscovery")
        }
    }

    /// StopDiscovery, then `drain`: the sightings signalled before its reply reach the scanner first.
    package func stopScanning() async throws {
        do {
            _ = try await bus.call(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StopDiscovery")
        } catch let error as DBusError where error.name.rawValue == BlueZNames.Errors.failed || error.name.rawValue == BlueZNames.Errors.notReady {
            // "No discovery started": discovery ended without us (power off, bluetoothd restart).
        }
        await drain()
    }
}

package enum BlueZRadioError: Error, CustomStringConvertible {
    case registration(DBusError)

    package var description: String {
        switch self {
        case .registration(let error): "bluetoothd refused the advertisement: \(error)"
        }
    }
}
