// SPDX-License-Identifier: GPL-3.0-or-later

/// bluetoothd's names on the bus (BlueZ 5.66 doc/*-api.txt).
public enum BlueZNames {
    public static let service = "org.bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    public static let advertisement = "org.bluez.LEAdvertisement1"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let properties = "org.freedesktop.DBus.Properties"
    /// 0xFD6F as BlueZ writes 16-bit UUIDs in ServiceData and UUIDs.
    public static let exposureNotificationUUID = "0000fd6f-0000-1000-8000-00805f9b34fb"

    /// `/org/bluez/hciN`.
    public static func adapterPath(index: UInt16) -> String { "/org/bluez/hci\(index)" }

    /// Error names bluetoothd answers with (src/error.c).
    public enum Errors {
        public static let failed = "org.bluez.Error.Failed"
        public static let notPermitted = "org.bluez.Error.NotPermitted"
        public static let alreadyExists = "org.bluez.Error.AlreadyExists"
        public static let doesNotExist = "org.bluez.Error.DoesNotExist"
        public static let inProgress = "org.bluez.Error.InProgress"
        public static let notReady = "org.bluez.Error.NotReady"
    }
}
