// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import GaendTestSupport
import Testing

/// gaend's command line as an installer meets it, on the binaries `make check` points the suites at
/// (the release build): the export keys a health authority hands out load, and usage errors exit 2.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct GaendCommandLineTests {
    /// The P-256 public keys that real servers published (Tests/KeyFilesTests/Fixtures).
    static let samplePEMs = [
        "google-en-internals-310-v1-public.pem", "google-ens-examples-export-public.pem", "google-ens-sample-export-public.pem",
        "cwa-dev-public.pem", "cwa-prod-public.pem",
    ]

    static var fixtures: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("KeyFilesTests/Fixtures").path
    }

    /// A release gaend read every PEM as "DECODER routines::unsupported": the memory BIO outlived
    /// the bytes it was made over. Every sample key, one made by gaen-keyserver and one by openssl
    /// must load, and the daemon come up on its bus.
    @Test func startsWithEverySampleKeyAsExportKey() throws {
        let directory = try TemporaryDirectory()
        let made = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", directory.path + "/made.pem"])
        try #require(made.status == 0, "make-key: \(made.standardError)")
        try made.standardOutput.write(toFile: directory.path + "/made.pub.pem", atomically: true, encoding: .utf8)
        try Self.openssl(public: directory.path + "/openssl.pub.pem", curve: "prime256v1")
        let pems = Self.samplePEMs.map { "\(Self.fixtures)/\($0)" } + [directory.path + "/made.pub.pem", directory.path + "/openssl.pub.pem"]
        let keys = pems.enumerated().flatMap { index, pem in ["--export-key", "\(310 + index):v1:\(pem)"] }

        let harness = try ManagerHarness(
            directory: directory, ["--radio", "none", "--index-url", "http://127.0.0.1:9/index.txt"] + keys)
        defer { harness.stop() }
        #expect(try harness.ctl(["status"]).status == 0)
        #expect(!harness.stderr.contains("DECODER"))
    }

    /// A key on another curve is refused at start, naming the option and the curve.
    @Test func refusesAnExportKeyOnAnotherCurve() throws {
        let directory = try TemporaryDirectory()
        try Self.openssl(public: directory.path + "/p384.pem", curve: "secp384r1")
        let run = try ToolRunner.run(
            "gaend",
            [
                "--radio", "none", "--bus", "none", "--data-dir", directory.path + "/data", "--index-url", "http://127.0.0.1:9/index.txt",
                "--export-key", "310:v1:\(directory.path)/p384.pem",
            ])
        #expect(run.status == 2)
        #expect(run.standardError.contains("export-key"))
        #expect(run.standardError.contains("secp384r1"))
    }

    /// A usage error exits 2 (argument-parser's own EX_USAGE would be 64), naming the key.
    @Test(arguments: [
        (["--frobnicate"], "frobnicate: not a configuration key"), (["--scan-window", "-1"], "scan-window: '-1' is not a number"),
        (["--radio"], "radio: has no value"), (["radio", "none"], "radio: expected --KEY VALUE"), (["--config"], "Error:"),
    ])
    func usageErrorsExitTwo(_ arguments: [String], _ message: String) throws {
        let run = try ToolRunner.run("gaend", arguments)
        #expect(run.status == 2, "\(arguments): \(run.standardError)")
        #expect(run.standardError.contains(message), "\(arguments): \(run.standardError)")
    }

    /// Issue 53, item 8: gaend.conf is read within 64 KiB (a 400 MB one was read whole), and a
    /// FIFO in its place is refused rather than waited on; each by name, exit 2.
    @Test func anOversizedOrSpecialConfigurationFileIsRefusedByItsSize() throws {
        let directory = try TemporaryDirectory()
        let big = directory.path + "/gaend.conf"
        try Data(repeating: 0x23, count: 400_000).write(to: URL(fileURLWithPath: big))
        let run = try ToolRunner.run("gaend", ["--config", big, "--radio", "none"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("\(big) is 400000 bytes, over the 65536-byte limit of a configuration"), "\(run.standardError)")
        let fifo = directory.path + "/fifo.conf"
        #expect(mkfifo(fifo, 0o600) == 0)
        let special = try ToolRunner.run("gaend", ["--config", fifo, "--radio", "none"], limit: 20)
        #expect(special.status == 2)
        #expect(special.standardError.contains("\(fifo) is not a regular file"), "\(special.standardError)")
        let shown = try ToolRunner.run("gaenctl", ["config", "show", "--config", big])
        #expect(shown.status != 0 && shown.standardError.contains("over the 65536-byte limit"), "\(shown.standardError)")
    }

    @Test func helpAndVersionExitZero() throws {
        #expect(try ToolRunner.run("gaend", ["--help"]).status == 0)
        #expect(try ToolRunner.run("gaend", ["--version"]).status == 0)
    }

    static func openssl(public path: String, curve: String) throws {
        let key = path + ".key"
        let generated = try ToolRunner.runProgram("/usr/bin/openssl", ["ecparam", "-name", curve, "-genkey", "-noout", "-out", key])
        try #require(generated.status == 0, "openssl ecparam: \(generated.standardError)")
        let extracted = try ToolRunner.runProgram("/usr/bin/openssl", ["ec", "-in", key, "-pubout", "-out", path])
        try #require(extracted.status == 0, "openssl ec: \(extracted.standardError)")
    }
}
