// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import SystemCalls
import Synchronization

/// An H4 stream on a file descriptor it owns: a connected unix or TCP socket, a raw tty, or the
/// kernel's HCI user channel (whose datagrams are H4 packets too). Its reader (a
/// `DescriptorThread`) polls the descriptor, frames what arrives and hands packets to `packets`;
/// `close()` stops it, and the descriptor is closed once, by the reader, when it ends.
package final class FileDescriptorTransport: HCITransport, @unchecked Sendable {
    // @unchecked: `fd` is set in init and only closed by the reader after `close()`; writes are
    // serialized by `writeLock`.
    private let fd: Int32
    private let reader: DescriptorThread
    private let writeLock = Mutex(())
    private let closed = Atomic<Bool>(false)
    package let packets: AsyncThrowingStream<H4Framer.Packet, any Error>
    private let description: String

    /// Takes ownership of `fd`.
    package init(owning fd: Int32, description: String) throws(HCITransportError) {
        self.fd = fd
        self.description = description
        // Bounded, with the reader waiting for room (see `deliver`): a controller that sends faster
        // than the host handles is slowed by the socket or tty, instead of growing memory without
        // bound and leaving a backlog that delays shutdown (a report flood did both).
        let (stream, continuation) = AsyncThrowingStream<H4Framer.Packet, any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(Self.bufferedPackets))
        packets = stream
        do {
            reader = try DescriptorThread(name: "gaend-hci-reader", work: Reading(fd: fd, continuation: continuation, description: description))
        } catch {
            SystemCall.close(fd)
            throw HCITransportError(operation: "starting the reader of \(description)", errno: error)
        }
    }

    deinit {
        close()
    }

    package func send(_ packet: [UInt8]) throws(HCITransportError) {
        guard !closed.load(ordering: .acquiring) else {
            throw HCITransportError(operation: "writing to \(description)", errno: .badDescriptor, detail: "the transport is closed")
        }
        let written = writeLock.withLock { _ in
            packet.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(fd, raw) } }
        }
        if case .failure(let error) = written { throw HCITransportError(operation: "writing to \(description)", errno: error) }
    }

    package func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        reader.stop()
    }

    /// The reader's work: read, frame, deliver; the end of the stream and the descriptor at its end.
    private final class Reading: DescriptorWork {
        let fd: Int32
        let continuation: AsyncThrowingStream<H4Framer.Packet, any Error>.Continuation
        let description: String
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: 4096)

        init(fd: Int32, continuation: AsyncThrowingStream<H4Framer.Packet, any Error>.Continuation, description: String) {
            self.fd = fd
            self.continuation = continuation
            self.description = description
        }

        func nextWait() -> DescriptorThread.Wait { DescriptorThread.Wait([(fd, .readable)]) }

        func handle(_ turn: DescriptorThread.Turn) -> Bool {
            guard !turn.events[0].isEmpty else { return true }
            let count: Int
            switch buffer.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try SystemCall.read(fd, into: raw) } }) {
            case .success(let read): count = read
            case .failure(.wouldBlock), .failure(.interrupted): return true
            case .failure(let error):
                continuation.finish(throwing: HCITransportError(operation: "reading \(description)", errno: error))
                return false
            }
            if count == 0 {
                continuation.finish(throwing: HCITransportError(operation: "reading \(description)", detail: "the controller closed the connection"))
                return false
            }
            do {
                for packet in try framer.append(buffer[0..<count]) {
                    guard FileDescriptorTransport.deliver(packet, to: continuation, thread: turn.thread) else { return false }
                }
            } catch {
                // Out of step: drop what is buffered and resynchronize on the next packet start.
                framer.reset()
            }
            return true
        }

        func finish() {
            continuation.finish()
            SystemCall.close(fd)
        }
    }
}

extension FileDescriptorTransport {
    static let bufferedPackets = 1024

    /// Enqueues a packet, waiting while the buffer is full; false when the transport was closed
    /// meanwhile.
    fileprivate static func deliver(
        _ packet: H4Framer.Packet, to continuation: AsyncThrowingStream<H4Framer.Packet, any Error>.Continuation, thread: DescriptorThread
    ) -> Bool {
        while true {
            switch continuation.yield(packet) {
            case .enqueued, .terminated: return true
            case .dropped:
                // Full: wait a millisecond for room, unless the transport is closed meanwhile.
                if thread.waitForStop(milliseconds: 1) { return false }
            @unknown default: return true
            }
        }
    }

    /// Connects to an H4 stream on a unix socket.
    package static func unix(path: String) throws(HCITransportError) -> FileDescriptorTransport {
        guard let address = UnixSocketAddress(path) else {
            throw HCITransportError(operation: "connecting to \(path)", errno: .nameTooLong, detail: "the socket path is too long")
        }
        let fd: Int32
        do {
            fd = try SystemCall.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue))
        } catch {
            throw HCITransportError(operation: "creating a unix socket", errno: error)
        }
        do {
            try SystemCall.connect(fd, to: address)
        } catch {
            SystemCall.close(fd)
            throw HCITransportError(operation: "connecting to \(path)", errno: error)
        }
        return try FileDescriptorTransport(owning: fd, description: "h4+unix:\(path)")
    }

    /// Connects to an H4 stream over TCP.
    package static func tcp(host: String, port: UInt16) throws(HCITransportError) -> FileDescriptorTransport {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HCITransportError(operation: "resolving \(host)", detail: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var lastError = Errno.connectionRefused
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let fd: Int32
            do {
                fd = try SystemCall.socket(domain: current.pointee.ai_family, type: current.pointee.ai_socktype, protocol: current.pointee.ai_protocol)
            } catch {
                lastError = error
                continue
            }
            guard connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 else {
                lastError = Errno.current
                SystemCall.close(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return try FileDescriptorTransport(owning: fd, description: "h4+tcp:\(host):\(port)")
        }
        throw HCITransportError(operation: "connecting to \(host):\(port)", errno: lastError)
    }

    /// Opens a UART controller in raw mode at `baud`.
    package static func serial(path: String, baud: Int) throws(HCITransportError) -> FileDescriptorTransport {
        let fd: Int32
        do {
            fd = try SystemCall.retrying { open(path, O_RDWR | O_NOCTTY | O_CLOEXEC) }
        } catch {
            throw HCITransportError(operation: "opening \(path)", errno: error)
        }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let failure = Errno.current
            SystemCall.close(fd)
            throw HCITransportError(operation: "reading the settings of \(path)", errno: failure)
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
            let failure = Errno.current
            SystemCall.close(fd)
            throw HCITransportError(operation: "setting \(path) raw at \(baud) baud", errno: failure)
        }
        return try FileDescriptorTransport(owning: fd, description: "h4:\(path)@\(baud)")
    }
}
