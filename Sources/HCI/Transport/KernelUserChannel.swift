// SPDX-License-Identifier: GPL-3.0-or-later

internal import CBlueZ
import Glibc
import SystemCalls

extension FileDescriptorTransport {
    /// The kernel's HCI user channel on controller `index`: exclusive raw access to the controller,
    /// whose packets are H4-framed datagrams. The adapter must be down in BlueZ
    /// (`btmgmt --index N power off`, or `hciconfig hciN down`) and the process needs
    /// CAP_NET_ADMIN (README, "Running on a real controller").
    package static func kernelUserChannel(index: UInt16) throws(HCITransportError) -> FileDescriptorTransport {
        let fd: Int32
        do {
            fd = try SystemCall.socket(domain: AF_BLUETOOTH, type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI)
        } catch {
            throw HCITransportError(operation: "opening an HCI socket", errno: error)
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = UInt16(HCI_CHANNEL_USER)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard result == 0 else {
            let failure = Errno.current
            SystemCall.close(fd)
            let hint: String? =
                switch failure {
                case .busy: "the controller is up in BlueZ: power it off first"
                case .notPermitted: "needs CAP_NET_ADMIN"
                default: nil
                }
            throw HCITransportError(operation: "binding the user channel of hci\(index)", errno: failure, detail: hint)
        }
        return try FileDescriptorTransport(owning: fd, description: "hci:hci\(index)")
    }
}
