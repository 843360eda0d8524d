// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import Storage

/// `gaenctl tools log verify`: every segment and record checked; exit 0 only when all is intact.
struct LogVerifyTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every segment and record of the contact log.",
        discussion: "Exit 0 when everything is intact, 1 when anything is torn, corrupt or unreadable. Changes nothing.")

    @OptionGroup var options: LogToolOptions

    func run() throws {
        let reader = ContactLogReader(dataDirectory: try options.dataDirectory())
        let verification: ContactLogReader.Verification
        do {
            verification = try reader.verify()
        } catch {
            throw logOperationError(error)
        }
        if options.json {
            print(
                JSONValue.object([
                    ("intact", .bool(verification.isIntact)),
                    ("segments", .array(verification.segments.map(Self.json))),
                    ("other_files", .array(verification.otherFiles.map { .string($0) })),
                ]).serialized())
        } else {
            for segment in verification.segments {
                let name = String(segment.path.split(separator: "/").last ?? "")
                if let reason = segment.unreadable {
                    print("\(name): UNREADABLE: \(reason)")
                    continue
                }
                let state = segment.isIntact ? "ok" : "DAMAGED"
                print("\(name): \(state), \(segment.aggregates) aggregates, \(segment.scanWindows) scan windows, \(segment.size) bytes")
                if let damage = segment.headerDamage { print("  header: \(damage) (its records are read)") }
                for problem in segment.problems { print("  \(problem)") }
                let counted = segment.corruptRecords + segment.outOfDayRecords
                if counted > segment.problems.count {
                    print("  … \(counted - segment.problems.count) more (\(segment.corruptRecords) corrupt, \(segment.outOfDayRecords) out of day in all)")
                }
                if segment.tornTailBytes > 0 {
                    print("  torn tail: \(segment.tornTailBytes) bytes from byte \(segment.intactEnd) (the writer cuts it when it opens the log)")
                }
            }
            for name in verification.otherFiles { print("\(name): not a segment (kept, not read)") }
            print(verification.isIntact ? "intact: \(verification.segments.count) segments" : "damaged")
        }
        if !verification.isIntact { throw ExitCode(GaenCtlExitCode.operationFailed.rawValue) }
    }

    static func json(_ segment: SegmentReport) -> JSONValue {
        .object([
            ("day", .string(segment.day.description)), ("path", .string(segment.path)), ("size", .int(segment.size)),
            ("intact", .bool(segment.isIntact)), ("aggregates", .int(Int64(segment.aggregates))),
            ("scan_windows", .int(Int64(segment.scanWindows))), ("torn_tail_bytes", .int(segment.tornTailBytes)),
            ("torn_tail_offset", segment.tornTailBytes > 0 ? .int(segment.intactEnd) : .null),
            // The offsets of the first problems (SegmentReport.listedProblemsLimit), and the counts of all.
            ("corrupt_records", .array(segment.problems.filter { $0.kind == .corrupt }.map { .int($0.offset) })),
            ("out_of_day_records", .array(segment.problems.filter { $0.kind == .outOfDay }.map { .int($0.offset) })),
            ("corrupt_record_count", .int(Int64(segment.corruptRecords))), ("out_of_day_record_count", .int(Int64(segment.outOfDayRecords))),
            ("unreadable", segment.unreadable.map { .string($0) } ?? .null),
            ("header_damage", segment.headerDamage.map { .string($0) } ?? .null),
        ])
    }
}
