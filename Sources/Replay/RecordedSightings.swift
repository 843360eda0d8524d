// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Foundation

/// One advertisement a receiver reported: when, from whom, how strongly, and (when a recording
/// has ground truth) how far apart the two were.
package struct RecordedSighting: Hashable, Sendable {
    package var time: UnixTime
    package var receiver: String
    package var transmitter: String
    /// The raw RSSI the receiver measured, dBm, before any correction.
    package var rssi: Int8
    /// Metres, when the recording knows it.
    package var distance: Double?

    package init(time: UnixTime, receiver: String, transmitter: String, rssi: Int8, distance: Double? = nil) {
        self.time = time
        self.receiver = receiver
        self.transmitter = transmitter
        self.rssi = rssi
        self.distance = distance
    }
}

/// Why a sightings file cannot be read, naming the line (1 is the header).
package struct SightingsFileError: Error, Equatable, Sendable, CustomStringConvertible {
    package var line: Int
    package var problem: String

    package init(line: Int, problem: String) {
        self.line = line
        self.problem = problem
    }

    package var description: String { line > 0 ? "line \(line): \(problem)" : problem }
}

/// The replay's CSV: a header `time,receiver,transmitter,rssi[,distance]`, then one row per
/// received advertisement (UTC unix seconds with a fraction, two ids, the raw RSSI in dBm, the
/// distance in metres or nothing). Read under limits; the first bad row stops the reading and is
/// named by its line.
package enum SightingsFile {
    package static let maximumBytes = 256 << 20
    package static let maximumRows = 5_000_000
    package static let maximumIDLength = 64
    static let header = ["time", "receiver", "transmitter", "rssi"]

    /// An id: 1 to `maximumIDLength` printable ASCII characters, none of them the CSV's comma.
    package static func isID(_ id: String) -> Bool {
        (1...maximumIDLength).contains(id.utf8.count) && id.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 && $0.value < 127 && $0 != "," }
    }

    package static func read(_ data: Data) throws(SightingsFileError) -> [RecordedSighting] {
        guard data.count <= maximumBytes else {
            throw SightingsFileError(line: 0, problem: "\(data.count) bytes, over the \(maximumBytes)-byte limit")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw SightingsFileError(line: 0, problem: "not UTF-8 text") }
        guard !text.isEmpty else { throw SightingsFileError(line: 0, problem: "empty: no header") }
        var rows = [RecordedSighting]()
        var hasDistance = false
        var lineNumber = 0
        // "\r\n" is one Character to Swift: both line ends are separators.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            if lineNumber == 1 {
                let names = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                guard names == header || names == header + ["distance"] else {
                    throw SightingsFileError(line: 1, problem: "the header is not time,receiver,transmitter,rssi[,distance]")
                }
                hasDistance = names.count == 5
                continue
            }
            if line.isEmpty { continue }
            guard rows.count < maximumRows else { throw SightingsFileError(line: lineNumber, problem: "more than \(maximumRows) rows") }
            rows.append(try row(line, number: lineNumber, hasDistance: hasDistance))
        }
        return rows
    }

    private static func row(_ line: Substring, number: Int, hasDistance: Bool) throws(SightingsFileError) -> RecordedSighting {
        func fail(_ problem: String) -> SightingsFileError { SightingsFileError(line: number, problem: problem) }
        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let expected = hasDistance ? 5 : 4
        guard fields.count == expected else { throw fail("\(fields.count) fields, expected \(expected)") }
        // Seconds with a fraction, kept to the millisecond; years 1970 to 2999.
        guard let seconds = Double(fields[0]), seconds.isFinite, (0..<32_503_680_000).contains(seconds) else {
            throw fail("time '\(fields[0])' is not unix seconds")
        }
        for (name, id) in [("receiver", fields[1]), ("transmitter", fields[2])] {
            guard isID(id) else {
                throw fail("\(name) '\(id.prefix(maximumIDLength))' is not an id of 1 to \(maximumIDLength) printable ASCII characters")
            }
        }
        guard fields[1] != fields[2] else { throw fail("receiver and transmitter are both '\(fields[1])'") }
        // 127 is HCI's "not available", which a recording of real reports never holds.
        guard let rssi = Int8(fields[3]), rssi <= 126 else { throw fail("rssi '\(fields[3])' is not dBm in -128...126") }
        var distance: Double?
        if hasDistance, !fields[4].isEmpty {
            guard let metres = Double(fields[4]), metres.isFinite, metres >= 0 else { throw fail("distance '\(fields[4])' is not metres") }
            distance = metres
        }
        return RecordedSighting(
            time: UnixTime(milliseconds: Int64((seconds * 1000).rounded())), receiver: fields[1], transmitter: fields[2], rssi: rssi, distance: distance)
    }
}
