// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Glibc
import Storage

/// One packet of a btsnoop capture: when, and the packet with its H4 type byte.
package struct CapturedPacket: Sendable, Equatable {
    /// The capture's timestamp as a Unix time (before any `--time-offset`), to the microsecond's
    /// millisecond.
    package var time: UnixTime
    /// H4 type (1 command, 2 ACL, 3 SCO, 4 event, 5 ISO), then the packet.
    package var bytes: [UInt8]

    package init(time: UnixTime, bytes: [UInt8]) {
        self.time = time
        self.bytes = bytes
    }
}

/// Why a capture cannot be read, naming the file and the record (1 is the first after the header).
package struct CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
    package var file: String
    /// 0: the file header or the file itself.
    package var record: Int
    package var problem: String

    package init(file: String, record: Int, problem: String) {
        self.file = file
        self.record = record
        self.problem = problem
    }

    package var description: String { record > 0 ? "\(file): record \(record): \(problem)" : "\(file): \(problem)" }
}

/// Reads a btsnoop capture (the format of Android's HCI snoop log and `btmon -w`) a record at a
/// time through a 1 MiB window, so that memory does not grow with the capture.
///
/// Header: `btsnoop\0`, version 1 (u32), datalink (u32): 1002, H4, as Android writes it, or 2001,
/// the Linux monitor's, as `btmon -w` writes it. Each record: original length, included length,
/// flags, cumulative drops (u32 each), timestamp (i64, microseconds since 0000-01-01,
/// `0x00dcddb30f2f8000` before the Unix epoch), all big-endian, then the included bytes: under
/// H4 the packet with its H4 type; under the monitor's the packet alone, its kind in the flags'
/// low 16 bits (2 command, 3 event, 4 and 5 ACL, 6 and 7 SCO, 18 and 19 ISO; the rest are the
/// monitor's own notes, skipped) and the controller's index in the high 16 (every controller's
/// packets are read). A record cut short, longer than any HCI packet, or of an unknown H4 type is
/// refused with its number; reading stops there.
package struct BTSnoopReader {
    package static let magic = Array("btsnoop\0".utf8)
    static let headerSize = 16
    static let recordHeaderSize = 24
    static let datalinkH4: UInt32 = 1002
    static let datalinkMonitor: UInt32 = 2001
    static let epochOffsetMicroseconds: Int64 = 0x00dc_ddb3_0f2f_8000
    /// The largest H4 packet: an ACL packet of 65,535 bytes with its header and type byte.
    static let maximumPacket = 1 + 4 + 65_535
    static let windowSize = 1 << 20

    package let name: String
    private let file: AppendOnlyFile
    private let size: Int64
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    private var offset = Int64(headerSize)
    package private(set) var records = 0
    /// Whether the records are the Linux monitor's (2001), their kind in the flags.
    private var monitor = false

    /// Whether `bytes` (a file's first bytes) begin a btsnoop capture.
    package static func isCapture(_ bytes: some Collection<UInt8>) -> Bool { bytes.starts(with: magic) }

    /// Opens `path` and checks its header; `name` is what errors call it.
    package init(path: String, name: String? = nil) throws(CaptureError) {
        self.name = name ?? path
        do {
            file = try AppendOnlyFile(path: path, mode: .readOnly)
            size = try file.size()
        } catch {
            throw CaptureError(file: name ?? path, record: 0, problem: "\(error)")
        }
        let header = try read(at: 0, count: Self.headerSize, record: 0)
        guard Array(header[0..<8]) == Self.magic else { throw CaptureError(file: self.name, record: 0, problem: "not a btsnoop capture (its first bytes)") }
        let version = Self.uint32(header, 8)
        let datalink = Self.uint32(header, 12)
        guard version == 1 else { throw CaptureError(file: self.name, record: 0, problem: "btsnoop version \(version), not 1") }
        guard datalink == Self.datalinkH4 || datalink == Self.datalinkMonitor else {
            throw CaptureError(
                file: self.name, record: 0, problem: "datalink \(datalink), neither 1002 (H4) nor 2001 (the Linux monitor's): the packets' kinds are unknown")
        }
        monitor = datalink == Self.datalinkMonitor
    }

    /// The H4 type of a monitor record's kind, nil for the monitor's own notes.
    static func h4Type(monitorOpcode: UInt32) -> UInt8? {
        switch monitorOpcode {
        case 2: 0x01
        case 3: 0x04
        case 4, 5: 0x02
        case 6, 7: 0x03
        case 18, 19: 0x05
        default: nil
        }
    }

    /// The next packet, or nil at the end of the capture.
    package mutating func next() throws(CaptureError) -> CapturedPacket? {
        while offset < size {
            if let packet = try record() { return packet }
        }
        return nil
    }

    /// The record at `offset` (moved past it): its packet, or nil for a monitor's note.
    private mutating func record() throws(CaptureError) -> CapturedPacket? {
        let number = records + 1
        let header = try read(at: offset, count: Self.recordHeaderSize, record: number)
        let original = Self.uint32(header, 0)
        let included = Int(Self.uint32(header, 4))
        let flags = Self.uint32(header, 8)
        let stamp = Int64(bitPattern: UInt64(Self.uint32(header, 16)) << 32 | UInt64(Self.uint32(header, 20)))
        guard included >= (monitor ? 0 : 1), included <= Self.maximumPacket else {
            throw CaptureError(file: name, record: number, problem: "a packet of \(included) bytes (1 to \(Self.maximumPacket))")
        }
        guard Int(original) >= included else {
            throw CaptureError(file: name, record: number, problem: "\(included) bytes included of an original \(original)")
        }
        let microseconds = stamp &- Self.epochOffsetMicroseconds
        // Years 1970 to 9999: anything else is not a time a capture was made.
        guard (0...253_402_300_799_000_000).contains(microseconds), stamp >= Self.epochOffsetMicroseconds else {
            throw CaptureError(file: name, record: number, problem: "timestamp \(stamp) is not a time from 1970 to 9999")
        }
        var packet = try read(at: offset + Int64(Self.recordHeaderSize), count: included, record: number)
        offset += Int64(Self.recordHeaderSize + included)
        records = number
        if monitor {
            guard let type = Self.h4Type(monitorOpcode: flags & 0xFFFF) else { return nil }
            packet.insert(type, at: 0)
        } else if !(1...5).contains(packet[0]) {
            throw CaptureError(file: name, record: number, problem: "H4 packet type \(packet[0]) (1 to 5)")
        }
        return CapturedPacket(time: UnixTime(milliseconds: microseconds / 1000), bytes: packet)
    }

    /// `count` bytes at `position`, through the window; a capture that ends first is refused.
    private mutating func read(at position: Int64, count: Int, record: Int) throws(CaptureError) -> [UInt8] {
        guard position + Int64(count) <= size else {
            throw CaptureError(
                file: name, record: record,
                problem: "cut short: \(count) bytes needed at byte \(position), the capture ends at \(size)")
        }
        if position < windowStart || position + Int64(count) > windowStart + Int64(window.count) {
            let length = Int(min(Int64(max(count, Self.windowSize)), size - position))
            var bytes = [UInt8](repeating: 0, count: length)
            let got: Int
            do {
                got = try bytes.withUnsafeMutableBytes { raw in
                    Result { () throws(FileSystemError) in try file.read(into: raw, at: position) }
                }.get()
            } catch {
                throw CaptureError(file: name, record: record, problem: "\(error)")
            }
            guard got >= count else {
                throw CaptureError(file: name, record: record, problem: "cut short: the capture shrank while it was read")
            }
            window = Array(bytes.prefix(got))
            windowStart = position
        }
        let start = Int(position - windowStart)
        return Array(window[start..<(start + count)])
    }

    private static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
