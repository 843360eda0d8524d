// SPDX-License-Identifier: GPL-3.0-or-later

internal import CBlueZ
import Glibc

extension FileDescriptorTransport {
    /// The kernel's HCI user channel on controller `index`: exclusive raw access to the controller,
    /// whose packets are H4-framed datagrams. The adapter must be down in BlueZ
    /// (`btmgmt --index N power off`, or `hciconfig hciN down`) and the process needs
    /// CAP_NET_ADMIN (README, "Running on a real controller").
    public static func kernelUserChannel(index: UInt16) throws(HCITransportError) -> FileDescriptorTransport {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else {
            throw HCITransportError(operation: "opening an HCI socket", code: errno)
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = UInt16(HCI_CHANNEL_USER)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            let hint = code == EBUSY ? " (the controller is up in BlueZ: power it off first)" : (code == EPERM ? " (needs CAP_NET_ADMIN)" : "")
            throw HCITransportError(operation: "binding the user channel of hci\(index)", errno: code, detail: String(cString: strerror(code)) + hint)
        }
        return try FileDescriptorTransport(owning: fd, description: "hci:hci\(index)")
    }
}
