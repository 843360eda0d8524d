// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import Storage

/// `gaenctl tools log export`: an owner's own data, aggregate by aggregate.
struct LogExportTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the contact log's aggregates and scan windows (RPI, AEM, times, RSSI).",
        discussion: "For owners who want their own data. The output holds identifiers: keep it private.")

    @OptionGroup var options: LogToolOptions

    @Option(help: "First UTC day to export, YYYY-MM-DD.")
    var from: String?

    @Option(help: "Last UTC day to export, YYYY-MM-DD.")
    var to: String?

    func run() throws {
        let first = try parseDay(from, argument: "--from")
        let last = try parseDay(to, argument: "--to")
        if let first, let last, last < first {
            throw UsageError("--to", "\(last) is before --from \(first)")
        }
        let range = (first ?? UTCDay(daysSinceEpoch: .min / 2))...(last ?? UTCDay(daysSinceEpoch: .max / 2))
        let reader = ContactLogReader(dataDirectory: try options.dataDirectory())
        var aggregates = [JSONValue]()
        var windows = [JSONValue]()
        do {
            try reader.forEachRecord(in: range) { record in
                switch record {
                case .aggregate(let aggregate):
                    if options.json {
                        aggregates.append(Self.json(aggregate))
                    } else {
                        print(Self.line(aggregate))
                    }
                case .scanWindow(let window):
                    windows.append(Self.json(window))
                }
            }
        } catch {
            throw logOperationError(error)
        }
        if options.json {
            print(JSONValue.object([("aggregates", .array(aggregates)), ("scan_windows", .array(windows))]).serialized())
        }
    }

    static func json(_ aggregate: ContactAggregate) -> JSONValue {
        .object([
            ("rpi", .string(aggregate.rpi.description)), ("aem", .string(aggregate.aem.description)),
            ("first_seen", .string(iso(aggregate.firstSeen))), ("last_seen", .string(iso(aggregate.lastSeen))),
            ("reports", .int(Int64(aggregate.reports))),
            ("rssi_max", aggregate.rssi.maximum.map { .int(Int64($0)) } ?? .null),
            ("rssi_sum", .int(Int64(aggregate.rssi.sum))), ("rssi_valid_reports", .int(Int64(aggregate.rssi.validReports))),
            ("previous_scan_end", aggregate.previousScanEnd.map { .string(iso($0)) } ?? .null),
        ])
    }

    static func json(_ window: ScanWindowRecord) -> JSONValue {
        .object([
            ("start", .string(iso(window.start))), ("end", .string(iso(window.end))), ("reports", .int(Int64(window.reports))),
            ("gaen_reports", .int(Int64(window.exposureNotificationReports))), ("aggregates", .int(Int64(window.aggregates))),
            ("previous_scan_end", window.previousScanEnd.map { .string(iso($0)) } ?? .null),
            ("monotonic_ms", .int(Int64(window.monotonicMilliseconds))),
            ("dropped_rpis", .int(Int64(window.droppedRPIs))), ("dropped_reports", .int(Int64(window.droppedReports))),
        ])
    }

    static func line(_ aggregate: ContactAggregate) -> String {
        let rssi = aggregate.rssi.maximum.map { "max \($0) dBm" } ?? "no RSSI"
        return "\(iso(aggregate.firstSeen))  \(aggregate.rpi)  \(aggregate.aem)  \(aggregate.reports) reports  \(rssi)"
    }

    /// ISO 8601 with milliseconds.
    static func iso(_ time: UnixTime) -> String {
        let whole = "\(time)"
        let milliseconds = ((time.milliseconds % 1000) + 1000) % 1000
        let digits = String(milliseconds)
        return String(whole.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
