// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import Glibc
import KeySchedule
import Storage

/// `gaenctl tools keys`: the TEK history of a data directory, read without the daemon.
struct KeysTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Print the TEK history stored in a data directory (read-only).",
        discussion: "Needs read access to the directory's 0600 files: run as the daemon's user or root.")

    @Option(help: "The daemon's data directory.", completion: .directory)
    var dataDir: String

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let directory = DataDirectory(path: dataDir)
        do {
            guard try directory.exists() else {
                throw OperationError("--data-dir: \(dataDir) does not exist")
            }
        } catch let error as FileSystemError {
            throw OperationError("--data-dir: \(error)", exitCode: error.isPermissionDenied ? .notAuthorized : .operationFailed)
        }
        let path = directory.path(of: KeyHistoryFile.name)
        let contents: KeyHistoryFile.Contents
        do throws(KeyHistoryError) {
            contents = try KeyHistoryFile.read(path) ?? KeyHistoryFile.Contents(keys: [], damagedRecords: [])
        } catch {
            if case .storage(let cause) = error, cause.isPermissionDenied {
                throw OperationError("\(error) (run as the daemon's user or root)", exitCode: .notAuthorized)
            }
            throw OperationError("\(error)")
        }
        if !contents.damagedRecords.isEmpty {
            GaenCtl.writeError("gaenctl: warning: \(contents.damagedRecords.count) damaged record(s) in \(path) were skipped")
        }
        if json {
            print(
                JSONValue.object([
                    ("path", .string(path)),
                    (
                        "keys",
                        .array(
                            contents.keys.map { entry in
                                .object([
                                    ("key_data", .string(entry.key.keyData.hex)),
                                    ("rolling_start_interval_number", .int(Int64(entry.key.rollingStartIntervalNumber.rawValue))),
                                    ("rolling_period", .int(Int64(entry.key.rollingPeriod))),
                                    ("utc_day", .string(entry.key.utcDay.description)),
                                    ("created", .string(entry.created.description)),
                                    ("shortened_by_release", .bool(entry.shortenedByRelease)),
                                ])
                            })
                    ),
                    ("damaged_records", .int(Int64(contents.damagedRecords.count))),
                ]).serialized())
            return
        }
        if contents.keys.isEmpty {
            print("no keys in \(path)")
            return
        }
        print("key data                          rolling start         period  created")
        for entry in contents.keys {
            let start = "\(entry.key.rollingStartIntervalNumber) (\(entry.key.utcDay))"
            let note = entry.shortenedByRelease ? "  shortened by release" : ""
            print("\(entry.key.keyData.hex)  \(pad(start, 20))  \(pad(String(entry.key.rollingPeriod), 6))  \(entry.created)\(note)")
        }
    }
}
