// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import Logging
import Storage

/// One day segment of the contact log, as found on disk after a crash, a disk error or an edit:
/// read by the tools and detection (reader, statistics, matching index) and repaired by the
/// writer's recovery at start-up.
enum ContactLogFuzzing {
    static let recordSize = 48
    static let checkedSize = 44

    /// Noon of the segment's day, so that recovery keeps it (retention counts from the clock).
    struct Clock: WallClock {
        var day: UTCDay
        func now() -> UnixTime { UnixTime(seconds: day.daysSinceEpoch &* 86_400 &+ 43_200) }
    }

    /// The day the header names (bytes 12-15, little-endian), which the file is named for, so that
    /// a seed written on any day is read; the header's check of the name is the unit tests' part.
    static func day(of file: [UInt8]) -> UTCDay {
        guard file.count >= 16 else { return UTCDay(daysSinceEpoch: 20_415) }
        let raw = (12..<16).reduce(UInt32(0)) { $0 | UInt32(file[$1]) << (8 * UInt32($1 - 12)) }
        return UTCDay(daysSinceEpoch: Int64(Int32(bitPattern: raw)))
    }

    static let dataDirectory: DataDirectory = {
        let directory = DataDirectory(path: FuzzInput.scratchDirectory + "/contact-log")
        do {
            try ContactLogWriter.contactsDirectory(in: directory).prepare()
        } catch {
            fatalError("gaend-fuzz: cannot prepare \(directory.path): \(error)")
        }
        return directory
    }()

    static let silent = Logger(label: "gaend-fuzz") { _ in SwiftLogNoOpLogHandler() }

    /// The first byte's low bit asks for every checksum to be made right before the file is
    /// written: a fuzzer cannot find CRC-32C values, and without them every record would be judged
    /// damaged and its fields never read.
    @Sendable static func segment(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        var file = Array(bytes.dropFirst())
        if first & 1 == 1 { fixChecksums(&file) }
        let day = day(of: file)
        let contacts = ContactLogWriter.contactsDirectory(in: dataDirectory)
        let path = contacts.path(of: "\(day).log")
        guard FileManager.default.createFile(atPath: path, contents: Data(file)) else { fatalError("gaend-fuzz: cannot write \(path)") }
        defer { clear(contacts) }

        let reader = ContactLogReader(dataDirectory: dataDirectory)
        _ = try? reader.verify()
        var rpis = [RollingProximityIdentifier]()
        _ = try? reader.forEachRecord { record in
            if case .aggregate(let aggregate) = record { rpis.append(aggregate.rpi) }
        }
        _ = try? ContactLogStatistics(reader: reader)
        if let index = try? MatchingIndex(reader: reader) {
            for rpi in rpis { _ = index.aggregates(of: rpi) }
        }
        _ = try? ContactLogWriter(dataDirectory: dataDirectory, clock: Clock(day: day), logger: silent)
    }

    /// Every entry but the writer's lock: the segment, and whatever recovery set aside.
    static func clear(_ contacts: DataDirectory) {
        for name in (try? contacts.entries()) ?? [] where name != ".lock" {
            unlink(contacts.path(of: name))
        }
    }

    /// The header's and every whole record's CRC-32C over their first 44 bytes, stored after them.
    static func fixChecksums(_ file: inout [UInt8]) {
        var offset = 0
        while offset + recordSize <= file.count {
            let crc = CRC32C.checksum(file[offset..<(offset + checkedSize)])
            for index in 0..<4 { file[offset + checkedSize + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
            offset += recordSize
        }
    }
}
