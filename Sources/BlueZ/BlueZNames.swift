// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// bluetoothd's names on the bus (BlueZ 5.66 doc/*-api.txt).
package enum BlueZNames {
    package static let service = "org.bluez"
    package static let adapter = "org.bluez.Adapter1"
    package static let device = "org.bluez.Device1"
    package static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    package static let advertisement = "org.bluez.LEAdvertisement1"
    /// 0xFD6F as BlueZ writes 16-bit UUIDs in ServiceData and UUIDs.
    package static let exposureNotificationUUID = ExposureNotificationPayload.serviceUUID128

    /// `/org/bluez/hciN`.
    package static func adapterPath(index: UInt16) -> String { "/org/bluez/hci\(index)" }

    /// Error names bluetoothd answers with (src/error.c).
    package enum Errors {
        package static let failed = "org.bluez.Error.Failed"
        package static let notPermitted = "org.bluez.Error.NotPermitted"
        package static let alreadyExists = "org.bluez.Error.AlreadyExists"
        package static let doesNotExist = "org.bluez.Error.DoesNotExist"
        package static let inProgress = "org.bluez.Error.InProgress"
        package static let notReady = "org.bluez.Error.NotReady"
    }
}
