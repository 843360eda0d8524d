// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import SQLite

/// DP-3T's bt-measurements experiment 34 (`../shared/traces/dp3t-exp34`, SOURCES.md there): six
/// sqlite files of one table, `results`, a row per advertisement a phone's GMS reported. Read as
/// they are, at run time: their licence (CC BY-ND 4.0) forbids committing a converted copy.
package enum ExperimentTraces {
    package static let scenarios = ["01-lunch", "02-train", "03-office", "04-queue", "05-party", "06-movement"]
    /// Each scenario's camera tracks, `computer-vision/NAME.zip`, in the same order.
    package static let tracks = ["0_lunch", "1_train", "2_coworking", "3_queue", "4_party", "5_moving"]

    /// The ordered (receiver, transmitter) pairs a scenario is judged on: phones of the recording
    /// the cameras tracked in the scene (the recording also heard phones outside it), each with
    /// whether the two spent at least `minutes` closer than `distance` (SwissCovid's "truly
    /// exposed": 15 minutes closer than 1.5 m).
    package static func truth(_ tracks: CameraTracks, phones: Set<String>, closerThan distance: Float, minutes: Double = 15) -> [Pair: Bool] {
        let tracked = tracks.positions.keys.filter(phones.contains).sorted()
        var truth = [Pair: Bool]()
        for (index, a) in tracked.enumerated() {
            for b in tracked[(index + 1)...] {
                let exposed = tracks.minutes(a, b, closerThan: distance) >= minutes
                truth[Pair(receiver: a, transmitter: b)] = exposed
                truth[Pair(receiver: b, transmitter: a)] = exposed
            }
        }
        return truth
    }

    package struct Pair: Hashable, Sendable {
        package var receiver: String
        package var transmitter: String

        package init(receiver: String, transmitter: String) {
            self.receiver = receiver
            self.transmitter = transmitter
        }
    }

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
