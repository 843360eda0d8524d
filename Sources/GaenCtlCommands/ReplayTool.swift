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
            The sightings are one CSV, or btsnoop captures (Android's HCI snoop log, `btmon -w`), one \
            per receiver, told apart by their first bytes. The CSV has the header \
            time,receiver,transmitter,rssi[,distance] and one row per received advertisement (UTC unix \
            seconds with a fraction, the raw RSSI in dBm). A capture's receiver is its file name \
            without the extension; its sightings are the advertising reports with 0xFD6F service \
            data, and their transmitter the capture whose host advertised that payload (any other is \
            'unknown'). Each receiver's sightings become scans (a gap over 25.5 s starts one), its \
            own contact log, and are matched against one key per transmitter and day \
            (docs/detection.md, "Replaying recorded encounters"). A bad row exits 2 naming its line; \
            a bad capture exits 2 naming the file and the record.
            """)

    @Argument(help: "The recorded sightings: one CSV, or btsnoop captures, one per receiver.", completion: .file())
    var sightings: [String]

    @Option(parsing: .unconditional, help: "Seconds added to the captures' times (a capture on local time: CEST is -7200).")
    var timeOffset: Int64 = 0

    @Option(help: "Only sightings from this UTC time (YYYY-MM-DDTHH:MM:SSZ or unix seconds).")
    var from: String?

    @Option(help: "Only sightings until this UTC time (YYYY-MM-DDTHH:MM:SSZ or unix seconds).")
    var until: String?

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
        guard !sightings.isEmpty else { throw ValidationError("SIGHTINGS: name a CSV or one capture per receiver") }
        guard abs(timeOffset) <= 86_400 else { throw ValidationError("--time-offset: \(timeOffset) is not seconds within a day (-86400...86400)") }
    }

    /// The rows of one CSV, or of several captures (told apart by the first file's first bytes),
    /// filtered by time.
    static func rows(_ paths: [String], offsetSeconds: Int64, from: UnixTime?, until: UnixTime?) throws -> [RecordedSighting] {
        guard let first = paths.first, let handle = FileHandle(forReadingAtPath: first) else {
            throw UsageError("SIGHTINGS", "\(paths.first ?? "") cannot be read")
        }
        let start = (try? handle.read(upToCount: BTSnoopReader.magic.count)) ?? Data()
        try? handle.close()
        guard BTSnoopReader.isCapture(start) else {
            guard paths.count == 1 else { throw UsageError("SIGHTINGS", "\(first) is not a btsnoop capture, and only one CSV is read at a time") }
            guard let data = FileManager.default.contents(atPath: first) else { throw UsageError("SIGHTINGS", "\(first) cannot be read") }
            do {
                return try SightingsFile.read(data).filter { row in
                    from.map { row.time >= $0 } ?? true && until.map { row.time <= $0 } ?? true
                }
            } catch {
                throw UsageError("SIGHTINGS", "\(first): \(error)")
            }
        }
        var captures = [CaptureSightings]()
        var receivers = Set<String>()
        for path in paths {
            let receiver = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            guard SightingsFile.isID(receiver), receiver != CaptureReplay.unknownTransmitter else {
                throw UsageError("SIGHTINGS", "\(path): its name '\(receiver)' is not a receiver id (1 to 64 printable ASCII characters, not 'unknown')")
            }
            guard receivers.insert(receiver).inserted else { throw UsageError("SIGHTINGS", "\(path): a second capture of receiver '\(receiver)'") }
            do {
                captures.append(try CaptureSightings(path: path, receiver: receiver))
            } catch {
                throw UsageError("SIGHTINGS", "\(error)")
            }
        }
        return CaptureReplay.rows(captures, offsetSeconds: offsetSeconds, from: from, until: until)
    }

    /// A UTC time as `YYYY-MM-DDTHH:MM:SSZ` or unix seconds.
    static func time(_ text: String?, _ argument: String) throws(UsageError) -> UnixTime? {
        guard let text else { return nil }
        if let seconds = Int64(text), let time = UnixTime(exactlySeconds: seconds) { return time }
        let parts = text.split(separator: "T")
        if parts.count == 2, text.hasSuffix("Z"), let days = ISO8601.parseDate(parts[0]) {
            let clock = parts[1].dropLast().split(separator: ":").compactMap { Int64($0) }
            if clock.count == 3, (0..<24).contains(clock[0]), (0..<60).contains(clock[1]), (0..<60).contains(clock[2]),
                let time = UnixTime(exactlySeconds: days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2])
            {
                return time
            }
        }
        throw UsageError(argument, "'\(text)' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ or unix seconds)")
    }

    func run() async throws {
        var settings = TraceReplay.Settings(configuration: try config.map { try readExposureConfiguration($0) } ?? .builtIn)
        settings.txPower = txPower
        settings.rssiCorrection = rssiCorrection
        settings.today = try parseDay(today, argument: "--today")
        let rows = try Self.rows(sightings, offsetSeconds: timeOffset, from: try Self.time(from, "--from"), until: try Self.time(until, "--until"))
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
