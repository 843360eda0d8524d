// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Foundation
import GaendAPI

/// `gaenctl log stats`: the daemon's contact log statistics, read from its data directory.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "The contact log of the daemon's data directory.", subcommands: [LogStatsTool.self])
}

/// `gaenctl config show`: the configuration gaend reads, with every default filled in.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "gaend's configuration.", subcommands: [ConfigShow.self])
}

struct ConfigShow: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the effective configuration (defaults filled in).")

    @Option(help: "The configuration file (default /etc/gaend/gaend.conf).")
    var config = "/etc/gaend/gaend.conf"

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        var configuration = DaemonConfiguration()
        if let data = FileManager.default.contents(atPath: config) {
            do {
                try configuration.apply(file: String(decoding: data, as: UTF8.self), path: config)
            } catch {
                throw OperationError("\(error)")
            }
        } else if FileManager.default.fileExists(atPath: config) {
            throw OperationError("\(config) cannot be read (run as root)", exitCode: .notAuthorized)
        }
        let values = configuration.describedValues()
        if json {
            print(Output.json(Self.jsonObject(values)))
            return
        }
        print("# \(FileManager.default.fileExists(atPath: config) ? config : "\(config) (absent: defaults)")")
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
                object[key.name] = given
                continue
            }
            if let text = given.last { object[key.name] = jsonValue(text) }
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
