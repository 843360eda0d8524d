// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Storage

/// Reads one day segment from start to end, handing each intact in-day record to a visitor and
/// reporting everything else. Changes nothing on disk.
enum SegmentReader {
    /// Records are read in chunks of this many bytes (a multiple of the record size).
    static let chunkSize = SegmentFormat.recordSize * 8192

    /// A record as the visitor sees it: 48 bytes at `raw`, valid until the visitor returns.
    struct RawRecord {
        var raw: UnsafeRawPointer
        var type: SegmentFormat.RecordType
        var offset: Int64
    }

    /// Scans the segment of `day` at `path`.
    ///
    /// - Parameter visit: called for each intact record whose times fall in the day, in file order.
    static func scan(path: String, day: UTCDay, visit: (RawRecord) -> Void) -> SegmentReport {
        do {
            return scan(file: try AppendOnlyFile(path: path, mode: .readOnly), day: day, visit: visit)
        } catch {
            var report = SegmentReport(day: day, path: path, size: 0)
            report.unreadable = "\(error)"
            return report
        }
    }

    /// Scans an open segment (the matching index reads its records again later through the same
    /// descriptor, so a file renamed or replaced meanwhile cannot mix two files' offsets).
    static func scan(file: AppendOnlyFile, day: UTCDay, visit: (RawRecord) -> Void) -> SegmentReport {
        let path = file.path
        var report = SegmentReport(day: day, path: path, size: 0)
        do {
            report.size = try file.size()
        } catch {
            report.unreadable = "\(error)"
            return report
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }

        do {
            let headerCount = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<SegmentFormat.headerSize]), at: 0)
            switch SegmentFormat.checkHeader(UnsafeRawBufferPointer(rebasing: buffer[0..<headerCount]), day: day) {
            case nil:
                break
            case .checksumOnly?:
                // Read what can be proven good: every record is judged by its own checksum.
                report.headerDamage = "\(SegmentFormat.HeaderProblem.checksumOnly)"
            case let problem?:
                report.unreadable = "\(path): \(problem)"
                return report
            }
        } catch {
            report.unreadable = "\(error)"
            return report
        }

        // Damaged records are held back until an intact one follows: only then are they "in the
        // middle". Whatever is still held at the end is the torn tail. They are held as a run (its
        // first offset and length), not one by one, so that a segment of a million damaged records
        // costs no more memory than a clean one.
        var pendingStart = Int64(0)
        var pendingCount = 0
        var intactEnd = Int64(SegmentFormat.headerSize)
        var offset = Int64(SegmentFormat.headerSize)
        while offset < report.size {
            let count: Int
            do {
                count = try file.read(into: buffer, at: offset)
            } catch {
                report.unreadable = "\(error)"
                return report
            }
            if count == 0 { break }
            let whole = count / SegmentFormat.recordSize
            for index in 0..<whole {
                let recordOffset = offset + Int64(index * SegmentFormat.recordSize)
                let raw = UnsafeRawPointer(buffer.baseAddress! + index * SegmentFormat.recordSize)
                guard RecordCodec.isIntact(raw), let type = SegmentFormat.RecordType(rawValue: raw.load(as: UInt8.self)) else {
                    if pendingCount == 0 { pendingStart = recordOffset }
                    pendingCount += 1
                    continue
                }
                if pendingCount > 0 {
                    report.addCorrupt(run: pendingStart, count: pendingCount)
                    pendingCount = 0
                }
                intactEnd = recordOffset + Int64(SegmentFormat.recordSize)
                do {
                    _ = try RecordCodec.decode(raw, day: day)
                } catch {
                    report.addOutOfDay(at: recordOffset, reason: "\(error)")
                    continue
                }
                switch type {
                case .aggregate: report.aggregates += 1
                case .scanWindow: report.scanWindows += 1
                }
                visit(RawRecord(raw: raw, type: type, offset: recordOffset))
            }
            offset += Int64(whole * SegmentFormat.recordSize)
            if whole * SegmentFormat.recordSize < count || count < buffer.count { break }
        }
        report.intactEnd = intactEnd
        report.tornTailBytes = report.size - intactEnd
        return report
    }
}
