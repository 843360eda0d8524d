// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Synchronization

/// An H4 stream on a file descriptor it owns: a connected unix or TCP socket, a raw tty, or the
/// kernel's HCI user channel (whose datagrams are H4 packets too). A reader thread polls the
/// descriptor and a wake pipe, frames what arrives and hands packets to `packets`; `close()` wakes
/// it, and the descriptor is closed once, by the thread, when it stops.
public final class FileDescriptorTransport: HCITransport, @unchecked Sendable {
    // @unchecked: `fd` and the pipe are set in init and only closed by the reader thread after
    // `close()`; writes are serialized by `writeLock`.
    private let fd: Int32
    private let wake: (read: Int32, write: Int32)
    private let writeLock = Mutex(())
    private let closed = Atomic<Bool>(false)
    public let packets: AsyncThrowingStream<H4Framer.Packet, any Error>
    private let description: String

    /// Takes ownership of `fd`.
    public init(owning fd: Int32, description: String) throws(HCITransportError) {
        // The wake channel is a socketpair, not a pipe: a wake after the reader has gone (and closed
        // its end) must fail with EPIPE, not raise SIGPIPE and kill the daemon.
        var pipeEnds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pipeEnds) == 0 else {
            let code = errno  // before close, which may set its own
            Glibc.close(fd)
            throw HCITransportError(operation: "creating the wake channel", code: code)
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        self.fd = fd
        self.description = description
        wake = (pipeEnds[0], pipeEnds[1])
        // Bounded, with the reader waiting for room (see `deliver`): a controller that sends faster
        // than the host handles is slowed by the socket or tty, instead of growing memory without
        // bound and leaving a backlog that delays shutdown (a report flood did both).
        let (stream, continuation) = AsyncThrowingStream<H4Framer.Packet, any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(Self.bufferedPackets))
        packets = stream
        let reader = Thread { [fd, wake] in
            Self.readLoop(fd: fd, wake: wake.read, continuation: continuation, description: description)
            Glibc.close(fd)
            Glibc.close(wake.read)
        }
        reader.name = "gaend-hci-reader"
        reader.start()
    }

    deinit {
        close()
        Glibc.close(wake.write)
    }

    public func send(_ packet: [UInt8]) throws(HCITransportError) {
        guard !closed.load(ordering: .acquiring) else {
            throw HCITransportError(operation: "writing to \(description)", errno: EBADF, detail: "the transport is closed")
        }
        try writeLock.withLock { _ throws(HCITransportError) in
            var offset = 0
            while offset < packet.count {
                // MSG_NOSIGNAL: a controller that hung up is an error to report, not a SIGPIPE.
                var written = packet.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, packet.count - offset, Int32(MSG_NOSIGNAL)) }
                if written < 0, errno == ENOTSOCK {
                    written = packet.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, packet.count - offset) }
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw HCITransportError(operation: "writing to \(description)", code: errno)
                }
                offset += written
            }
        }
    }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = Glibc.send(wake.write, &byte, 1, Int32(MSG_NOSIGNAL))
    }

    private static func readLoop(
        fd: Int32, wake: Int32, continuation: AsyncThrowingStream<H4Framer.Packet, any Error>.Continuation, description: String
    ) {
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                continuation.finish(throwing: HCITransportError(operation: "polling \(description)", code: errno))
                return
            }
            if fds[1].revents != 0 {
                continuation.finish()
                return
            }
            guard fds[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                continuation.finish(throwing: HCITransportError(operation: "reading \(description)", code: errno))
                return
            }
            if count == 0 {
                continuation.finish(throwing: HCITransportError(operation: "reading \(description)", errno: 0, detail: "the controller closed the connection"))
                return
            }
            do {
                for packet in try framer.append(buffer[0..<count]) {
                    guard deliver(packet, to: continuation, wake: wake) else {
                        continuation.finish()
                        return
                    }
                }
            } catch {
                // Out of step: drop what is buffered and resynchronize on the next packet start.
                framer.reset()
            }
        }
    }
}

extension FileDescriptorTransport {
    static let bufferedPackets = 1024

    /// Enqueues a packet, waiting while the buffer is full; false when the transport was closed
    /// meanwhile.
    private static func deliver(
        _ packet: H4Framer.Packet, to continuation: AsyncThrowingStream<H4Framer.Packet, any Error>.Continuation, wake: Int32
    ) -> Bool {
        while true {
            switch continuation.yield(packet) {
            case .enqueued, .terminated: return true
            case .dropped:
                var wakeFD = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
                if poll(&wakeFD, 1, 1) > 0 { return false }
            @unknown default: return true
            }
        }
    }

    /// Connects to an H4 stream on a unix socket.
    public static func unix(path: String) throws(HCITransportError) -> FileDescriptorTransport {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HCITransportError(operation: "creating a unix socket", code: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw HCITransportError(operation: "connecting to \(path)", errno: ENAMETOOLONG, detail: "the socket path is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw HCITransportError(operation: "connecting to \(path)", code: code)
        }
        return try FileDescriptorTransport(owning: fd, description: "h4+unix:\(path)")
    }

    /// Connects to an H4 stream over TCP.
    public static func tcp(host: String, port: UInt16) throws(HCITransportError) -> FileDescriptorTransport {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HCITransportError(operation: "resolving \(host)", errno: 0, detail: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.pointee.ai_protocol)
            if fd >= 0 {
                if connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    return try FileDescriptorTransport(owning: fd, description: "h4+tcp:\(host):\(port)")
                }
                lastError = errno
                Glibc.close(fd)
            }
            entry = current.pointee.ai_next
        }
        throw HCITransportError(operation: "connecting to \(host):\(port)", code: lastError)
    }

    /// Opens a UART controller in raw mode at `baud`.
    public static func serial(path: String, baud: Int) throws(HCITransportError) -> FileDescriptorTransport {
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw HCITransportError(operation: "opening \(path)", code: errno) }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw HCITransportError(operation: "reading the settings of \(path)", code: code)
        }
        cfmakeraw(&settings)
        let speed: speed_t
        switch baud {
        case 9600: speed = speed_t(B9600)
        case 19_200: speed = speed_t(B19200)
        case 38_400: speed = speed_t(B38400)
        case 57_600: speed = speed_t(B57600)
        case 230_400: speed = speed_t(B230400)
        case 460_800: speed = speed_t(B460800)
        case 500_000: speed = speed_t(B500000)
        case 921_600: speed = speed_t(B921600)
        case 1_000_000: speed = speed_t(B1000000)
        case 2_000_000: speed = speed_t(B2000000)
        case 3_000_000: speed = speed_t(B3000000)
        default: speed = speed_t(B115200)
        }
        cfsetispeed(&settings, speed)
        cfsetospeed(&settings, speed)
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw HCITransportError(operation: "setting \(path) raw at \(baud) baud", code: code)
        }
        return try FileDescriptorTransport(owning: fd, description: "h4:\(path)@\(baud)")
    }
}
