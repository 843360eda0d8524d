// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import Foundation
import Replay
import Storage

/// `gaenctl tools log import`: a btsnoop capture (`btmon -w`, Android's HCI snoop log) into a
/// contact log, through the scanner's aggregation and the log's writer.
struct LogImportTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import what a btsnoop capture heard into a contact log, as gaend's scanner writes it.",
        discussion: """
            The capture's advertising reports are cut into the scans its host switched on and off \
            (LE Set (Extended) Scan Enable), or, in a capture without them, where GMS cuts scans (a \
            gap over 25.5 s); each window's GAEN sightings are folded per RPI as gaend's scanner folds \
            them, its other reports counted, and the windows appended by the log's own writer, with \
            the RPIs and AEMs heard: `gaenctl tools match` then matches real key files against \
            them. A bad capture exits 2 naming the record; the log is not touched then.
            """)

    @Argument(help: "The capture (btsnoop).", completion: .file())
    var capture: String

    @OptionGroup var options: LogToolOptions

    @Option(parsing: .unconditional, help: "Seconds added to the capture's times (a capture on local time: CEST is -7200).")
    var timeOffset: Int64 = 0

    @Option(parsing: .unconditional, help: "Added to every raw RSSI, dB (the receiver's rssi-correction; default 0).")
    var rssiCorrection: Int = 0

    func validate() throws {
        guard abs(timeOffset) <= 86_400 else { throw ValidationError("--time-offset: \(timeOffset) is not seconds within a day (-86400...86400)") }
        guard (-100...100).contains(rssiCorrection) else { throw ValidationError("--rssi-correction: \(rssiCorrection) is not dB in -100...100") }
    }

    func run() async throws {
        // Imports go to a folder named on purpose, never the daemon's by default.
        guard let path = options.dataDir else { throw UsageError("--data-dir", "import writes a contact log: name the folder") }
        let data = DataDirectory(path: path)
        // The whole capture is read first: a bad one changes nothing.
        let sightings: CaptureSightings
        do {
            sightings = try CaptureSightings(path: capture, receiver: "import")
        } catch {
            throw UsageError("CAPTURE", "\(error)")
        }
        let imported: CaptureImport.Imported
        do {
            _ = try data.prepare()
            imported = try await CaptureImport.run(sightings, offsetSeconds: timeOffset, rssiCorrection: rssiCorrection, into: data)
        } catch let error as ContactLogError {
            throw logOperationError(error)
        } catch {
            throw OperationError("\(error)")
        }
        if options.json {
            print(
                JSONValue.object([
                    ("scan_windows", .int(Int64(imported.windows))), ("aggregates", .int(Int64(imported.aggregates))),
                    ("reports", .int(Int64(imported.reports))), ("gaen_sightings", .int(Int64(sightings.heard.count))),
                    ("without_rssi", .int(Int64(sightings.withoutRSSI))), ("outside_scans", .int(Int64(imported.outsideScans))),
                ]).serialized())
        } else {
            print(
                "\(imported.windows) scan windows, \(imported.aggregates) aggregates from \(sightings.heard.count) GAEN sightings"
                    + " and \(imported.reports - sightings.heard.count) other reports, into \(path)")
        }
    }
}
