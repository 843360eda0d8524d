// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import Foundation
import GaendAPI
import GaendConfiguration

/// `gaenctl log stats`: the daemon's contact log statistics, read from its data directory.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "The contact log of the daemon's data directory.", subcommands: [LogStatsTool.self])
}

/// `gaenctl config show`: the configuration gaend runs with, asked over D-Bus; or, with
/// `--config FILE`, what gaend would run with from that file, every error as FILE:LINE.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "gaend's configuration.", subcommands: [ConfigShow.self])
}

struct ConfigShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the configuration gaend runs with (defaults filled in).",
        discussion: """
            Without --config, asks the running gaend (GetConfiguration): the file it read, every key's \
            value, and the keys a reload changed that wait for a restart. With --config FILE, reads \
            FILE as gaend would and prints the result, or the first error as FILE:LINE: key: problem.
            """)

    @Option(help: ArgumentHelp("Read this configuration file instead of asking gaend.", valueName: "file"), completion: .file())
    var config: String?

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        guard let config else { return try await showRunning() }
        var configuration = DaemonConfiguration()
        let text: String?
        do {
            text = try ConfigurationFile.read(config)
        } catch {
            guard FileManager.default.isReadableFile(atPath: config) else {
                throw OperationError("\(config) cannot be read (run as root)", exitCode: .notAuthorized)
            }
            throw OperationError("\(error)")
        }
        if let text {
            do {
                try configuration.apply(file: text, path: config)
            } catch {
                throw OperationError("\(error)")
            }
        } else if FileManager.default.fileExists(atPath: config) {
            throw OperationError("\(config) cannot be read (run as root)", exitCode: .notAuthorized)
        }
        let values = configuration.describedValues()
        if options.json {
            print(Output.json(["file": FileManager.default.fileExists(atPath: config) ? config as Any : NSNull(), "values": Self.jsonObject(values)]))
            return
        }
        print("# \(FileManager.default.fileExists(atPath: config) ? config : "\(config) (absent: defaults)")")
        for (key, value) in values { print("\(key) = \(value)") }
    }

    func showRunning() async throws {
        let client = try await options.connect()
        let answer = try await client.call(.getConfiguration)
        guard answer.count == 3, let file = answer[0].string else { throw OperationError("gaend answered GetConfiguration with an unexpected shape") }
        let values: [(key: String, value: String)] = (answer[1].arrayElements ?? []).compactMap { row in
            guard let fields = row.structureFields, fields.count == 2, let key = fields[0].string, let value = fields[1].string else { return nil }
            return (key, value)
        }
        let pending = (answer[2].arrayElements ?? []).compactMap(\.string)
        if options.json {
            print(
                Output.json([
                    "file": file.isEmpty ? NSNull() : file as Any, "values": Self.jsonObject(values), "restart_pending": pending.map(JSONShape.name),
                ]))
            return
        }
        print("# gaend on \(client.busName), read from \(file.isEmpty ? "no file (defaults and its command line)" : file)")
        if !pending.isEmpty {
            print("# changed in the file, in effect after a restart: \(pending.joined(separator: ", "))")
        }
        for (key, value) in values { print("\(key) = \(value)") }
    }

    /// The values with JSON's own types: a placeholder for a value not set (`(none)`, `(built in)`,
    /// `(the controller's)`) is null, the masked API key stays a string (`(set, N characters)`),
    /// true and false are booleans, numbers are numbers, a repeatable key is an array (empty when
    /// none is given); ranges (`600-1200`) stay strings, as the file writes them.
    static func jsonObject(_ values: [(key: String, value: String)]) -> [String: Any] {
        var object: [String: Any] = [:]
        for key in ConfigurationKey.all {
            let given = values.filter { $0.key == key.name }.map(\.value)
            if key.repeatable {
                object[JSONShape.name(key.name)] = given
                continue
            }
            if let text = given.last { object[JSONShape.name(key.name)] = jsonValue(text) }
        }
        return object
    }

    static func jsonValue(_ text: String) -> Any {
        if text.hasPrefix("(") && text.hasSuffix(")") && !text.hasPrefix("(set") { return NSNull() }
        if text == "true" || text == "false" { return text == "true" }
        if let number = Int(text) { return number }
        if let number = Double(text) { return number }
        return text
    }
}
