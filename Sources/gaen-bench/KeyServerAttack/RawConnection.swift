// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// One blocking TCP connection from a chosen loopback source address (127.0.0.0/8 is all
/// loopback), so that each attacker is a client of its own to the server's rate limits. Every
/// send and receive has a timeout: nothing an attack does waits without bound.
final class RawConnection {
    let fd: Int32
    private var buffered: [UInt8] = []

    init(to port: Int, from source: String, timeout seconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard Self.withAddress(source, port: 0, { bind(fd, $0, $1) }) == 0, Self.withAddress("127.0.0.1", port: port, { connect(fd, $0, $1) }) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED
            close(fd)
            throw POSIXError(code)
        }
    }

    deinit { close(fd) }

    private static func withAddress(_ ip: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(ip)
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }

    /// Sends what the server takes; false once it stops taking (closed, reset or timed out).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// One response: its status, lowercased headers and body (by Content-Length); nil if the
    /// connection ends or times out first.
    func readResponse() -> (status: Int, headers: [String: String], body: [UInt8])? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffered.indices.dropLast(3).first { buffered[$0..<$0 + 4].elementsEqual(separator) }
            if headEnd == nil, !fill() { return nil }
        }
        guard let end = headEnd else { return nil }
        let lines = String(decoding: buffered[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "), let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        var headers = [String: String]()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffered.count < end + 4 + length { if !fill() { return nil } }
        let body = Array(buffered[(end + 4)..<(end + 4 + length)])
        buffered.removeFirst(end + 4 + length)
        return (status, headers, body)
    }

    /// Every response until the server closes (or 10 s pass without a byte): their statuses.
    func readStatusesToEnd() -> [Int] {
        var statuses = [Int]()
        while let response = readResponse() { statuses.append(response.status) }
        return statuses
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        buffered += chunk[0..<n]
        return true
    }
}
