// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import Foundation
import GaendAPI

/// `gaenctl keys [--test]` and `gaenctl preauthorize [--request]`.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Release the diagnosis keys (the current key is cut short and replaced); --test includes it unchanged (test mode).")

    @OptionGroup var options: DaemonOptions

    @Flag(help: "GetTestDiagnosisKeys: include the current key, change nothing (needs test-mode = true).")
    var test = false

    func run() async throws {
        let client = try await options.connect()
        let reply = try await client.call(test ? .getTestDiagnosisKeys : .getDiagnosisKeys)
        let keys: DBusValue = reply.first ?? .array(element: .byte, [])
        Self.printKeys(keys, json: options.json)
        if !test, !options.json, let note = Self.replacementNote(keys) { print(note) }
    }

    /// Releasing cuts the current key short and puts a new one on the air (the spec's rule: a
    /// released key is never advertised again), at most once a UTC day: a release later that day
    /// releases the same cut key. Said, so that the owner knows the beacon changed.
    static func replacementNote(_ keys: DBusValue) -> String? {
        let rows = (keys.arrayElements ?? []).compactMap { $0.structureFields }.filter { $0.count == 4 }
        guard let last = rows.last, case .uint32(let start) = last[1], case .uint32(let period) = last[2], period < 144 else { return nil }
        let end = Output.time(UInt64(start + period) * 600)
        return "Today's key was cut short at \(end) (\(period) of 144 intervals) and released; "
            + "a new key has replaced it on the air since then, and is released after its day."
    }

    /// Prints keys of type a(ayuuu): one line each, or a JSON array.
    static func printKeys(_ keys: DBusValue, json: Bool) {
        let rows = (keys.arrayElements ?? []).compactMap { $0.structureFields }.filter { $0.count == 4 }
        if json {
            print(
                Output.json(
                    rows.map {
                        [
                            "key": Output.plain($0[0]), "rolling_start": Output.plain($0[1]), "rolling_period": Output.plain($0[2]),
                            "transmission_risk": Output.plain($0[3]),
                        ]
                    }))
            return
        }
        print("key                               rolling start  period  risk")
        for row in rows {
            print("\(Output.plain(row[0]))  \(Output.plain(row[1]))  \(Output.plain(row[2]))  \(Output.plain(row[3]))")
        }
        print("\(rows.count) key\(rows.count == 1 ? "" : "s")")
    }
}

struct PreauthorizeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preauthorize",
        abstract: "Pre-authorize releasing the keys (valid 5 days); --request releases them under that authorization.")

    @OptionGroup var options: DaemonOptions

    @Flag(help: "RequestPreAuthorizedDiagnosisKeys: release the keys now, and print them.")
    var request = false

    func run() async throws {
        let client = try await options.connect()
        guard request else {
            _ = try await client.call(.preAuthorizeDiagnosisKeys)
            print(options.json ? Output.json(["preauthorized": true]) : "key release pre-authorized for 5 days")
            return
        }
        // The keys come in the reply (and in a DiagnosisKeysAvailable signal addressed to us alone).
        let reply = try await client.call(.requestPreAuthorizedDiagnosisKeys)
        KeysCommand.printKeys(reply.first ?? .array(element: .byte, []), json: options.json)
    }
}

/// `gaenctl reset [--yes]`.
struct ResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Delete all keys, the contact log, results, test results and the consent.")

    @OptionGroup var options: DaemonOptions

    @Flag(help: "Do not ask.")
    var yes = false

    func run() async throws {
        if !yes {
            guard isatty(0) != 0 else { throw UsageError("--yes", "needed when not run on a terminal: this deletes all data") }
            FileHandle.standardError.write(Data("This deletes every key, the contact log and all results. Type yes to go on: ".utf8))
            guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else { throw OperationError("nothing was reset") }
        }
        let client = try await options.connect()
        _ = try await client.call(.resetAllData)
        print(options.json ? Output.json(["reset": true]) : "all data reset")
    }
}
