// SPDX-License-Identifier: GPL-3.0-or-later

import BuildRevision
import ArgumentParser
import CommandSupport
import ENCore
import ENCrypto
import Foundation
import KeyServer

/// `gaen-keyserver`: a key server and verification server compatible with the reference servers'
/// device APIs: `serve` (the HTTP API), and the administrator's commands.
@main
struct KeyServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gaen-keyserver",
        abstract: "A GAEN key server: verification codes, publishing, signed exports.",
        version: BuildVersion.string,
        subcommands: [Serve.self, IssueCode.self, Export.self, MakeKey.self])

    static func main() async { await mainExitingTwoOnUsage() }
}

/// A numeric option within its range, or a usage error naming it: a value outside would trap
/// later (a sleep, milliseconds of a delay, a count of keys) or mean nothing (a negative one).
func checkOption<Value: Comparable>(_ value: Value, in range: ClosedRange<Value>, _ option: String, unit: String) throws {
    guard range.contains(value) else { throw ValidationError("\(option): \(value) is outside \(range.lowerBound)...\(range.upperBound) \(unit)") }
}

/// Reads a PEM private key file.
func privateKey(_ path: String, option: String) throws -> ECDSAPrivateKey {
    guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("\(option): \(path) cannot be read") }
    do {
        return try ECDSAPrivateKey(pem: String(decoding: data, as: UTF8.self))
    } catch {
        throw ValidationError("\(option): \(path) is not a P-256 private key in PEM: \(error)")
    }
}

struct IssueCode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue-code",
        abstract: "Issue a verification code for a test result; prints the short code.",
        discussion: "One issue makes a short code (8 digits, valid 15 minutes) and a long code (16 letters and digits, valid 24 hours), "
            + "either of which a device may send, once. --json prints both and their expiries as POST /admin/codes answers.")

    @OptionGroup var options: ServerOptions

    @OptionGroup var codeKey: CodeHMACKeyOptions

    @Option(help: "The verification signing key (PEM, P-256).", completion: .file(extensions: ["pem"]))
    var verificationKey: String

    @Option(help: "confirmed, likely, negative or user-report.", completion: .list(["confirmed", "likely", "negative", "user-report"]))
    var type: String

    @Option(help: "The day symptoms began, YYYY-MM-DD.")
    var symptomDate: String?

    @Option(help: "The test date, YYYY-MM-DD.")
    var testDate: String?

    @Flag(help: "Print the short and long code and their expiries as JSON (the fields of POST /admin/codes).")
    var json = false

    func run() async throws {
        func day(_ text: String?, _ option: String) throws -> UTCDay? {
            guard let text else { return nil }
            guard let day = UTCDay(parsing: text) else { throw ValidationError("\(option): '\(text)' is not a date YYYY-MM-DD") }
            return day
        }
        let verifier = try options.openVerifier(signingKey: try privateKey(verificationKey, option: "--verification-key"), codeKey: codeKey)
        do {
            let issued = try await verifier.issueCode(
                testType: type, symptomDate: try day(symptomDate, "--symptom-date"), testDate: try day(testDate, "--test-date"), now: SystemClockTime.now)
            if json {
                let data = try JSONSerialization.data(withJSONObject: issued.responseFields, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                // One line, the short code alone: scripts read it so.
                print(issued.code)
            }
        } catch let refusal as Verifier.Refusal {
            throw ValidationError("--type: \(refusal.message)")
        }
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write an export batch of the keys out of their embargo, and the index.")

    @OptionGroup var options: ServerOptions

    @OptionGroup var export: ExportOptions

    @Option(help: "The directory the exports are written to (and served from).")
    var directory: String

    func run() async throws {
        let store = try options.openKeyStore()
        let worker = ExportWorker(store: store, signingKey: try export.signingKey(), settings: try export.settings(directory: directory))
        let run = try await worker.run(now: SystemClockTime.now)
        for name in run.files { print("wrote \(name)") }
        if run.exportingElsewhere {
            print("another replica holds the export lock and is exporting now: this one wrote nothing")
        } else if run.files.isEmpty {
            print("nothing to export")
        }
    }
}

struct MakeKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make-key", abstract: "Write a new P-256 signing key (PEM) and print its public key.")

    @Option(help: "Where to write the private key (mode 0600).", completion: .file(extensions: ["pem"]))
    var out: String

    func run() throws {
        let key = try ECDSAPrivateKey()
        guard FileManager.default.createFile(atPath: out, contents: Data(key.pem.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("--out: \(out) cannot be written")
        }
        print(key.publicKeyPEM, terminator: "")
    }
}

/// The wall clock, read once per command.
enum SystemClockTime {
    static var now: UnixTime { UnixTime(seconds: Int64(Date().timeIntervalSince1970)) }
}
