// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import ENCore
import Foundation
import GaendAPI

/// `gaenctl test-result add|list` and `gaenctl share`.
struct TestResultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-result", abstract: "Record and list test results.", subcommands: [TestResultAdd.self, TestResultList.self])
}

/// `YYYY-MM-DD` (UTC midnight) as unix seconds.
func parseDate(_ text: String, option: String) throws -> UInt64 {
    let parts = text.split(separator: "-")
    guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1970...9999).contains(year),
        (1...12).contains(month), (1...31).contains(day)
    else { throw UsageError(option, "'\(text)' is not a date YYYY-MM-DD") }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
        calendar.component(.day, from: date) == day
    else { throw UsageError(option, "'\(text)' is not a date YYYY-MM-DD") }
    return UInt64(date.timeIntervalSince1970)
}

struct TestResultAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Record a test result; prints its id.")

    @OptionGroup var options: DaemonOptions

    @Option(help: "The test date, YYYY-MM-DD (UTC).")
    var date: String

    @Option(help: "confirmed, likely, negative or self-reported.", completion: .list(["confirmed", "likely", "negative", "self-reported"]))
    var type: String

    @Option(help: "The day symptoms began, YYYY-MM-DD (UTC), if known.")
    var symptomOnset: String?

    func run() async throws {
        guard ["confirmed", "likely", "negative", "self-reported"].contains(type) else {
            throw UsageError("--type", "'\(type)' is not confirmed, likely, negative or self-reported")
        }
        var fields: [String: DBusValue] = [Field.testDate.rawValue: .uint64(try parseDate(date, option: "--date")), Field.type.rawValue: .string(type)]
        if let symptomOnset { fields[Field.symptomOnset.rawValue] = .uint64(try parseDate(symptomOnset, option: "--symptom-onset")) }
        let client = try await options.connect()
        let id = try await client.call(.addTestResult, [.properties(fields)]).first?.string ?? ""
        print(options.json ? Output.json(["id": id]) : id)
    }
}

struct TestResultList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the recorded test results.")

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        let client = try await options.connect()
        let results = (try await client.call(.getTestResults).first?.arrayElements ?? []).compactMap { $0.stringKeyed?.mapValues { $0.variant ?? $0 } }
        if options.json {
            print(Output.json(results.map { JSONShape.renamed($0.mapValues(Output.plain)) }))
            return
        }
        if results.isEmpty { print("no test results") }
        for result in results {
            let date = Output.time(result[Field.testDate.rawValue]?.uint64 ?? 0).prefix(10)
            let onset = result[Field.symptomOnset.rawValue]?.uint64.map { " symptoms since \(Output.time($0).prefix(10))" } ?? ""
            let shared = result[Field.shared.rawValue]?.boolean == true ? " shared" : ""
            print("\(result[Field.id.rawValue]?.string ?? "?")  \(result[Field.type.rawValue]?.string ?? "?") test of \(date)\(onset)\(shared)")
        }
    }
}

struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share", abstract: "Verify a code with the health authority and publish the diagnosis keys for a test result.")

    @OptionGroup var options: DaemonOptions

    @Option(name: .customLong("test-result"), help: "The test result's id (gaenctl test-result list).")
    var testResult: String

    @Option(help: "The verification code from the health authority.")
    var code: String

    func run() async throws {
        let client = try await options.connect()
        _ = try await client.call(.shareDiagnosisKeys, [.string(testResult), .string(code)])
        print(options.json ? Output.json(["shared": testResult]) : "diagnosis keys shared for test result \(testResult)")
    }
}

/// The fields of a test result, as Manager1 names them.
typealias Field = Manager1.TestResultField
