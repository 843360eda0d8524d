// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import SQLite

/// DP-3T's bt-measurements experiment 34 (`../shared/traces/dp3t-exp34`, SOURCES.md there): six
/// sqlite files of one table, `results`, a row per advertisement a phone's GMS reported. Read as
/// they are, at run time: their licence (CC BY-ND 4.0) forbids committing a converted copy.
package enum ExperimentTraces {
    package static let scenarios = ["01-lunch", "02-train", "03-office", "04-queue", "05-party", "06-movement"]

    package struct Unreadable: Error, CustomStringConvertible {
        package var description: String
    }

    /// `scenarioNN-name.sqlite` of `folder`, in time order.
    package static func sightings(scenario: String, in folder: String) throws -> [RecordedSighting] {
        let path = folder + "/scenario\(scenario).sqlite"
        let rows = try SQLiteDatabase(path: path).query(
            "SELECT timestamp, receiver_id, transmitter_id, rssi, ground_truth_distance FROM results ORDER BY timestamp")
        return try rows.map { row in
            guard row.count == 5, let seconds = row[0].real, let receiver = row[1].text, let transmitter = row[2].text,
                let rssi = row[3].integer.flatMap(Int8.init(exactly:))
            else { throw Unreadable(description: "\(path): a row that is not (time, receiver, transmitter, rssi, distance)") }
            return RecordedSighting(
                time: UnixTime(milliseconds: Int64((seconds * 1000).rounded())), receiver: receiver, transmitter: transmitter, rssi: rssi,
                distance: row[4].real)
        }
    }
}
