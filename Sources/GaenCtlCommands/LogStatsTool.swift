// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import Storage

/// `gaenctl tools log stats`: counts per day and per hour. Never an identifier.
struct LogStatsTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Per-day and per-hour counts of the contact log (no RPIs are printed).")

    @OptionGroup var options: LogToolOptions

    func run() throws {
        let reader = ContactLogReader(dataDirectory: try options.dataDirectory())
        let statistics: ContactLogStatistics
        do {
            statistics = try ContactLogStatistics(reader: reader)
        } catch {
            throw logOperationError(error)
        }
        let days = statistics.days.keys.sorted()
        func hours(of day: UTCDay) -> [(UnixTime, ContactLogStatistics.Counts)] {
            statistics.hours.filter { UTCDay(containing: $0.key) == day }.sorted { $0.key < $1.key }
        }
        if options.json {
            print(
                JSONValue.object([
                    (
                        "days",
                        .array(
                            days.map { day in
                                var members = [("day", JSONValue.string(day.description))] + Self.json(statistics.days[day]!)
                                members.append(("hours", .array(hours(of: day).map { .object([("hour", .string("\($0.0)"))] + Self.json($0.1)) })))
                                return .object(members)
                            })
                    ),
                    ("segments_intact", .bool(statistics.segments.allSatisfy(\.isIntact))),
                ]).serialized())
            return
        }
        if days.isEmpty {
            print("no contact log records in \(reader.directory.path)")
            return
        }
        print("period                aggregates  distinct RPIs  scan windows  reports  listening (s)  dropped RPIs")
        for day in days {
            print(Self.row(day.description, statistics.days[day]!))
            for (hour, counts) in hours(of: day) {
                let text = "\(hour)"
                print(Self.row("  " + String(text.dropFirst(11).prefix(5)) + " UTC", counts))
            }
        }
        if !statistics.segments.allSatisfy(\.isIntact) {
            print("some segments are damaged: run `gaenctl tools log verify`")
        }
    }

    static func json(_ counts: ContactLogStatistics.Counts) -> [(String, JSONValue)] {
        [
            ("aggregates", .int(Int64(counts.aggregates))), ("distinct_rpis", .int(Int64(counts.distinctRPIs))),
            ("scan_windows", .int(Int64(counts.scanWindows))), ("reports", .int(Int64(counts.reports))),
            ("scan_reports", .int(Int64(counts.scanReports))), ("listening_seconds", .int(counts.listeningMilliseconds / 1000)),
            ("dropped_rpis", .int(Int64(counts.droppedRPIs))), ("dropped_reports", .int(Int64(counts.droppedReports))),
        ]
    }

    static func row(_ label: String, _ counts: ContactLogStatistics.Counts) -> String {
        pad(label, 21) + " " + pad(String(counts.aggregates), 11) + " " + pad(String(counts.distinctRPIs), 14) + " "
            + pad(String(counts.scanWindows), 13) + " " + pad(String(counts.reports), 8) + " " + pad(String(counts.listeningMilliseconds / 1000), 14)
            + " " + String(counts.droppedRPIs)
    }
}
