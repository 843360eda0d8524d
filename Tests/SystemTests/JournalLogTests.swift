// SPDX-License-Identifier: GPL-3.0-or-later

import DaemonLog
import Foundation
import GaendTestSupport
import Logging
import Testing

/// gaend's log lines as journald stores them: with a priority prefix and no timestamp when stderr
/// is the journal's stream (systemd says which in $JOURNAL_STREAM), as before elsewhere.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct JournalLogTests {
    /// Runs gaend with stderr appended to a file; with `journal`, JOURNAL_STREAM names that file
    /// (as systemd names its stream), otherwise another file. Returns what gaend wrote there.
    func stderrOfGaend(journal: Bool?) throws -> (status: Int32, lines: [String]) {
        let directory = try TemporaryDirectory()
        let gaend = try ToolRunner.productsDirectory().appendingPathComponent("gaend").path
        let stream = journal == false ? "\(directory.path)/other" : "\(directory.path)/stderr"
        let variable = journal == nil ? "" : #"JOURNAL_STREAM=$(stat -c %d:%i "$S") "#
        // A data directory gaend cannot create: it logs a critical line and exits 1.
        let script = #"touch "$E" "$S"; \#(variable)exec "$G" --radio none --bus none --data-dir /proc/gaend-test/data 2>>"$E""#
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = nil
        environment["E"] = "\(directory.path)/stderr"
        environment["S"] = stream
        environment["G"] = gaend
        let run = try ToolRunner.runProgram("/bin/sh", ["-c", script], environment: environment)
        let text = try String(contentsOfFile: "\(directory.path)/stderr", encoding: .utf8)
        return (run.status, text.split(separator: "\n").map(String.init))
    }

    @Test func underTheJournalEachLineCarriesItsPriority() throws {
        let (status, lines) = try stderrOfGaend(journal: true)
        #expect(status == 1)
        let line = try #require(lines.first { $0.contains("cannot open the data directory") })
        #expect(line.hasPrefix("<2>gaend: "))
        #expect(!line.contains("2026-") && !line.contains("critical"))
    }

    @Test func elsewhereLinesKeepTheirTimeAndLevel() throws {
        for journal in [nil, false] {
            let (status, lines) = try stderrOfGaend(journal: journal)
            #expect(status == 1)
            let line = try #require(lines.first { $0.contains("cannot open the data directory") })
            #expect(line.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ critical gaend: "#, options: .regularExpression) != nil, "\(line)")
        }
    }

    @Test func levelsMapToSyslogPriorities() {
        let expected: [(Logger.Level, Int)] = [(.critical, 2), (.error, 3), (.warning, 4), (.notice, 5), (.info, 6), (.debug, 7), (.trace, 7)]
        for (level, priority) in expected { #expect(JournalLogHandler.priority(of: level) == priority) }
        let line = JournalLogHandler.line(
            format: .journal, label: "gaend.radio", level: .warning, message: "two\nlines", metadata: ["b": "2", "a": "1"], now: { "" })
        #expect(line == #"<4>gaend.radio: a=1 b=2 two\nlines"#)
    }

    /// The shared threshold: a logger follows it until given a level of its own.
    @Test func theThresholdIsSharedAndChangesInPlace() {
        let threshold = LogThreshold(.info)
        var handler = JournalLogHandler(label: "t", format: .journal, threshold: threshold, write: { _ in })
        #expect(handler.logLevel == .info)
        threshold.level = .debug
        #expect(handler.logLevel == .debug)
        handler.logLevel = .error
        threshold.level = .trace
        #expect(handler.logLevel == .error)
    }
}
