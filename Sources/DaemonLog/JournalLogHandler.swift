// SPDX-License-Identifier: GPL-3.0-or-later

package import Logging
import ENCore
import Storage
import Synchronization
import SystemCalls

/// A daemon's log lines on standard error. Under systemd, when standard error is the journal's
/// stream, each line starts with its syslog priority as sd-daemon(3) defines it (`<3>` error ...
/// `<7>` debug) and carries no timestamp: the journal stamps every entry and stores it at that
/// priority, so `journalctl -p err` finds the errors. Elsewhere a line starts with the time and
/// the level, as swift-log's `StreamLogHandler` writes it.
package struct JournalLogHandler: LogHandler {
    package enum Format: Sendable {
        /// `<N>label: message key=value`
        case journal
        /// `2026-11-24T07:42:21Z info label: message key=value`
        case terminal
    }

    let label: String
    let format: Format
    let threshold: LogThreshold
    let write: @Sendable (String) -> Void
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    /// A level set on this logger alone; otherwise the daemon's (`log-level`, changed on reload).
    private var ownLevel: Logger.Level?

    package init(label: String, format: Format, threshold: LogThreshold, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.format = format
        self.threshold = threshold
        self.write = write
    }

    package var logLevel: Logger.Level {
        get { ownLevel ?? threshold.level }
        set { ownLevel = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        write(Self.line(format: format, label: label, level: event.level, message: "\(event.message)", metadata: merged, now: Self.timestamp))
    }

    /// One line, without its newline. Metadata is sorted by key, so lines compare across runs.
    package static func line(
        format: Format, label: String, level: Logger.Level, message: String, metadata: Logger.Metadata, now: () -> String
    ) -> String {
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = fields.isEmpty ? message : "\(fields) \(message)"
        // One entry per line: a message with a newline would become two entries, the second
        // without its priority.
        let flat = text.replacing("\n", with: "\\n")
        switch format {
        case .journal: return "<\(priority(of: level))>\(label): \(flat)"
        case .terminal: return "\(now()) \(level) \(label): \(flat)"
        }
    }

    /// The syslog priority of a level (sd-daemon(3): 2 critical, 3 error, 4 warning, 5 notice,
    /// 6 info, 7 debug; swift-log's trace is below debug, so it is debug too).
    package static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .critical: 2
        case .error: 3
        case .warning: 4
        case .notice: 5
        case .info: 6
        case .debug, .trace: 7
        }
    }

    /// The time as every other part of gaend writes it (ISO 8601, UTC).
    static func timestamp() -> String { ISO8601.format(SystemWallClock().now()) }
}

/// The daemon's log level, shared by every logger and changed in place when the configuration
/// is reloaded.
package final class LogThreshold: Sendable {
    private let current: Mutex<Logger.Level>

    package init(_ level: Logger.Level) { current = Mutex(level) }

    package var level: Logger.Level {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
