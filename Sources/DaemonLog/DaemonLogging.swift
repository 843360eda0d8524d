// SPDX-License-Identifier: GPL-3.0-or-later

import Logging
import Synchronization
import SystemCalls

/// How gaend and gaen-keyserver set up swift-log: every logger writes `JournalLogHandler` lines to
/// standard error, in the journal's form when standard error is the journal, at the level of one
/// shared `LogThreshold`.
package enum DaemonLogging {
    /// Whether standard error is the journal's stream: systemd names that stream in
    /// $JOURNAL_STREAM (`DEVICE:INODE`), and it is the journal only while fd 2 is still that file
    /// (a child whose stderr was redirected inherits the variable but not the stream).
    package static func standardErrorIsJournal(environment: [String: String]) -> Bool {
        guard let text = environment["JOURNAL_STREAM"], let named = FileIdentity(journalStream: text),
            let actual = try? SystemCall.identity(of: 2)
        else { return false }
        return named == actual
    }

    package static func bootstrap(threshold: LogThreshold, environment: [String: String]) {
        let format: JournalLogHandler.Format = standardErrorIsJournal(environment: environment) ? .journal : .terminal
        let output = StandardError()
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, format: format, threshold: threshold, write: output.write) }
    }
}

/// Standard error, a whole line per write: lines from threads logging at once never interleave.
final class StandardError: Sendable {
    private let lock = Mutex(())

    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        lock.withLock { _ in
            _ = bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(2, raw) } }
        }
    }
}
