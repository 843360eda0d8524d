// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Detection
import ENCore
import Foundation
import Replay
import Storage

/// `gaenctl tools replay`: recorded sightings through gaend's own path, scanner to verdict.
struct ReplayTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay recorded sightings through gaend's scanner, contact log, matcher and scoring, per receiver and transmitter.",
        discussion: """
            SIGHTINGS.csv has the header time,receiver,transmitter,rssi[,distance] and one row per \
            received advertisement (UTC unix seconds with a fraction, the raw RSSI in dBm). Each \
            receiver's sightings become scans (a gap over 25.5 s starts one), its own contact log, \
            and are matched against one key per transmitter and day (docs/detection.md, "Replaying \
            recorded encounters"). A bad row exits 2 naming its line.
            """)

    @Argument(help: "The recorded sightings (CSV).", completion: .file(extensions: ["csv"]))
    var sightings: String

    @Option(help: "The exposure configuration, in any shape gaend reads (default: gaend's built-in one).", completion: .file(extensions: ["json"]))
    var config: String?

    // Unconditional: the values are negative, and `--tx-power -24` must not read -24 as an option.
    @Option(parsing: .unconditional, help: "The TX power the transmitters' metadata says, dBm.")
    var txPower: Int8 = -24

    @Option(parsing: .unconditional, help: "Added to every raw RSSI, dB (as rssi-correction).")
    var rssiCorrection: Int = 5

    @Option(help: "The UTC day to score on, YYYY-MM-DD (default: the last sighting's).")
    var today: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard (-127...126).contains(Int(txPower)) else { throw ValidationError("--tx-power: \(txPower) is not dBm in -127...126") }
        guard (-100...100).contains(rssiCorrection) else { throw ValidationError("--rssi-correction: \(rssiCorrection) is not dB in -100...100") }
    }

    func run() async throws {
        var settings = TraceReplay.Settings(configuration: try config.map { try readExposureConfiguration($0) } ?? .builtIn)
        settings.txPower = txPower
        settings.rssiCorrection = rssiCorrection
        settings.today = try parseDay(today, argument: "--today")
        guard let data = FileManager.default.contents(atPath: sightings) else { throw UsageError("SIGHTINGS", "\(sightings) cannot be read") }
        let rows: [RecordedSighting]
        do {
            rows = try SightingsFile.read(data)
        } catch {
            throw UsageError("SIGHTINGS", "\(sightings): \(error)")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gaenctl-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (pairs, statistics) = try await TraceReplay(settings: settings, scratch: scratch).run(rows)
        if json {
            print(JSONValue.object([("pairs", .array(pairs.map(\.json))), ("statistics", statistics.json)]).serialized())
            return
        }
        print(
            "\(statistics.rows) sightings, \(statistics.receivers) receivers, \(statistics.transmitters) transmitters: \(statistics.scans) scans,"
                + " \(statistics.aggregates) aggregates, \(statistics.matchedKeys) keys matched, \(statistics.windows) windows")
        for pair in pairs {
            let seconds = pair.windows.flatMap(\.scanInstances).map(\.secondsSinceLastScan).reduce(0, +)
            let verdict = pair.scores.verdict.exposed ? "EXPOSED on \(pair.scores.verdict.dayList.map(\.description).joined(separator: ", "))" : "no exposure"
            print("\(pair.receiver) heard \(pair.transmitter): \(pair.windows.count) windows, \(seconds) s: \(verdict)")
        }
        print("\(statistics.pairsExposed) of \(statistics.pairsHeard) pairs heard are exposures")
    }
}
