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
            print(Output.json(Dictionary(values.map { ($0.key, $0.value) }, uniquingKeysWith: { first, second in "\(first),\(second)" })))
            return
        }
        print("# \(FileManager.default.fileExists(atPath: config) ? config : "\(config) (absent: defaults)")")
        for (key, value) in values { print("\(key) = \(value)") }
    }
}
