// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import ENCore
import Foundation
import GaendAPI
import Storage
import SystemCalls

/// `gaenctl heard [--since 24h]`: what the beacon heard, asked over D-Bus (`GetHeard`) so that a
/// member of group gaend needs no access to the data directory. Counts only: sightings and
/// distinct RPIs per hour as a bar chart, and how strong the sightings were.
struct HeardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heard", abstract: "Show what the beacon heard: sightings per hour, distinct RPIs, signal strengths (no identifiers).")

    @Option(help: ArgumentHelp("How far back: N followed by m, h or d (at most 14d).", valueName: "span"))
    var since = "24h"

    @OptionGroup var options: DaemonOptions

    func validate() throws {
        guard Self.seconds(since) != nil else {
            throw ValidationError("--since: '\(since)' is not a span such as 30m, 6h or 14d (at most 14d)")
        }
    }

    /// `30m`, `6h`, `14d` in seconds; nil for anything else or more than 14 days.
    static func seconds(_ span: String) -> Int64? {
        guard let unit = span.last, let count = Int64(span.dropLast()), count > 0 else { return nil }
        let multiplier: Int64
        switch unit {
        case "m": multiplier = 60
        case "h": multiplier = 3600
        case "d": multiplier = 86_400
        default: return nil
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: multiplier)
        return overflow || seconds > 14 * 86_400 ? nil : seconds
    }

    func run() async throws {
        guard let span = Self.seconds(since) else { return }
        let client = try await options.connect()
        let start = UInt64(max(0, SystemWallClock().now().seconds - span))
        let answer = try await client.call(.getHeard, [.uint64(start)]).first?.string ?? ""
        if options.json {
            print(answer)
            return
        }
        guard let heard = HeardReport(json: answer) else { throw OperationError("gaend answered GetHeard with an unexpected shape") }
        for line in heard.lines(width: Terminal.columns(), busName: client.busName) { print(line) }
    }
}

/// `GetHeard`'s answer, read back for printing.
struct HeardReport {
    struct Hour {
        var start: UInt64
        var sightings: Int
        var distinctRPIs: Int
    }

    struct Bucket {
        var lowest: Int?
        var highest: Int?
        var sightings: Int
    }

    var since: UInt64
    var until: UInt64
    var sightings: Int
    var distinctRPIs: Int
    var scanWindows: Int
    var listeningSeconds: Int
    var droppedRPIs: Int
    var droppedReports: Int
    var hours: [Hour]
    var rssi: [Bucket]
    var rssiUnknown: Int
    var held: Int

    init?(json: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
            let since = object["since"] as? Int, let until = object["until"] as? Int, let hours = object["hours"] as? [[String: Any]],
            let rssi = object["rssi"] as? [[String: Any]]
        else { return nil }
        self.since = UInt64(max(0, since))
        self.until = UInt64(max(0, until))
        sightings = object["sightings"] as? Int ?? 0
        distinctRPIs = object["distinct_rpis"] as? Int ?? 0
        scanWindows = object["scan_windows"] as? Int ?? 0
        listeningSeconds = object["listening_seconds"] as? Int ?? 0
        droppedRPIs = object["dropped_rpis"] as? Int ?? 0
        droppedReports = object["dropped_reports"] as? Int ?? 0
        rssiUnknown = object["rssi_unknown"] as? Int ?? 0
        held = object["held_sightings"] as? Int ?? 0
        self.hours = hours.map {
            Hour(start: UInt64(max(0, $0["start"] as? Int ?? 0)), sightings: $0["sightings"] as? Int ?? 0, distinctRPIs: $0["distinct_rpis"] as? Int ?? 0)
        }
        self.rssi = rssi.map { Bucket(lowest: $0["lowest"] as? Int, highest: $0["highest"] as? Int, sightings: $0["sightings"] as? Int ?? 0) }
    }

    /// The report as printed: totals, the hours as a bar chart, the RSSI histogram.
    func lines(width: Int, busName: String) -> [String] {
        var lines = [
            "heard by gaend on \(busName), \(Output.time(since)) to \(Output.time(until))",
            "\(sightings) sighting\(sightings == 1 ? "" : "s") of \(distinctRPIs) distinct RPI\(distinctRPIs == 1 ? "" : "s") "
                + "in \(scanWindows) scan window\(scanWindows == 1 ? "" : "s") (\(listeningSeconds / 60) min listening)",
        ]
        if held > 0 {
            lines.append(
                "\(held) more sighting\(held == 1 ? "" : "s") held: heard while the clock was not trusted, filed into the log once it is")
        }
        if droppedRPIs > 0 {
            lines.append(
                "\(droppedRPIs) RPI\(droppedRPIs == 1 ? "" : "s") dropped (\(droppedReports) report\(droppedReports == 1 ? "" : "s")): "
                    + "scan windows over their cap of distinct RPIs kept the strongest")
        }
        lines += [
            "",
            "hour (UTC)        sightings per hour (distinct RPIs)",
        ]
        let hourRows = hours.map { hour in
            BarChart.Row(
                label: String(Output.time(hour.start).prefix(16)).replacingOccurrences(of: "T", with: " "), value: hour.sightings,
                note: "(\(hour.distinctRPIs))")
        }
        lines += BarChart.lines(hourRows, width: width)
        lines += ["", "strongest RSSI     sightings"]
        let bucketRows = rssi.map { bucket in
            let label =
                switch (bucket.lowest, bucket.highest) {
                case (nil, let highest?): "below \(highest + 1) dBm"
                case (let lowest?, nil): "\(lowest) dBm and up"
                case (let lowest?, let highest?): "\(lowest) to \(highest)"
                case (nil, nil): "any"
                }
            return BarChart.Row(label: label, value: bucket.sightings, note: "")
        }
        lines += BarChart.lines(bucketRows, width: width)
        if rssiUnknown > 0 { lines.append("\(rssiUnknown) sighting\(rssiUnknown == 1 ? "" : "s") without an RSSI reading") }
        return lines
    }
}

/// Horizontal bars in eighths of a character cell: a picture is read faster than a column of
/// numbers. Labels are padded to one width, bars scaled to the largest value.
enum BarChart {
    struct Row {
        var label: String
        var value: Int
        var note: String
    }

    static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    static func lines(_ rows: [Row], width: Int) -> [String] {
        let labelWidth = rows.map(\.label.count).max() ?? 0
        let numberWidth = rows.map { String($0.value).count }.max() ?? 1
        let noteWidth = rows.map(\.note.count).max() ?? 0
        let barWidth = max(10, width - labelWidth - numberWidth - noteWidth - 4)
        let largest = rows.map(\.value).max() ?? 0
        return rows.map { row in
            let label = row.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0)
            let number = String(repeating: " ", count: numberWidth - String(row.value).count) + String(row.value)
            return "\(label) \(number) \(bar(row.value, of: largest, width: barWidth))\(row.note.isEmpty ? "" : " " + row.note)"
        }
    }

    /// A bar `value / largest` of `width` cells long; any value above zero shows at least an eighth.
    static func bar(_ value: Int, of largest: Int, width: Int) -> String {
        guard largest > 0, value > 0 else { return "" }
        let units = max(1, Int((Double(value) / Double(largest) * Double(width * 8)).rounded()))
        return String(repeating: "█", count: units / 8) + eighths[units % 8]
    }
}

/// The terminal gaenctl writes to.
enum Terminal {
    /// Columns of standard output's terminal; `$COLUMNS` or 80 when it is not one.
    static func columns() -> Int {
        var size = winsize()
        if isatty(1) != 0, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init).map { max(20, $0) } ?? 80
    }
}
