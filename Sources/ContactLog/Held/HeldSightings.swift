// SPDX-License-Identifier: GPL-3.0-or-later

package import Conditions
import ENCore
package import Logging
package import Storage

/// Scan windows heard while the wall clock could not be trusted, kept aside on the boot clock
/// (`<data-dir>/held-sightings`) until it can, then re-timed into the contact log.
///
/// At most 24 hours of windows are held (by the boot clock, newest end back to oldest start), and at
/// most `maximumAggregates` aggregates (a flood on an untrusted clock grew the file 99 KB/s and
/// gaend's memory 175 KB/s, and a file over the read limit stopped gaend at every start: issue 40,
/// item 9); past either the oldest windows go, counted. A file gaend cannot read is dropped with a
/// warning, never a failed start: these are expendable next to a running beacon. A restart keeps them while the boot is the same (its id is in the
/// file); after a reboot the boot clock started again and they cannot be re-timed: they are
/// dropped, counted and logged at warning. Nothing here reads the wall clock.
package actor HeldSightings {
    package static let fileName = "held-sightings"
    /// The span of windows held.
    package static let maximumSpanMilliseconds: Int64 = 24 * 3_600_000
    /// Oldest windows are dropped an hour's worth at a time, so the file is rewritten at most hourly.
    static let dropSlackMilliseconds: Int64 = 3_600_000
    /// The aggregates held: 100,000 are a 5.4 MB file and about 20 MB once loaded, a day of 250 RPIs
    /// in every window of the default schedule. Past it the oldest tenth goes at once, so the file
    /// is not rewritten at every window.
    package static let maximumAggregates = 100_000

    package nonisolated let path: String
    private let bootID: String?
    private let logger: Logger
    private var entries: [HeldFormat.Entry] { didSet { changes.signal() } }
    /// Signalled when what is held may have changed (status shows it: HeldSightings).
    package nonisolated let changes = Changes()
    /// The aggregates of `entries`.
    private var heldAggregates = 0
    private var file: AppendOnlyFile?
    /// Windows dropped since open: past the 24 hours, from another boot, or damaged.
    package private(set) var dropped: Int

    package init(dataDirectory: DataDirectory, bootID: String?, logger: Logger = Logger(label: "gaend.contacts")) throws(ContactLogError) {
        path = dataDirectory.path(of: Self.fileName)
        self.bootID = bootID
        self.logger = logger
        (entries, dropped) = try Self.load(dataDirectory: dataDirectory, path: path, bootID: bootID, logger: logger)
        heldAggregates = entries.reduce(0) { $0 + $1.aggregates.count }
    }

    /// What the file holds for this boot, and how many windows of another boot (or unreadable) went.
    private static func load(
        dataDirectory: DataDirectory, path: String, bootID: String?, logger: Logger
    ) throws(ContactLogError) -> ([HeldFormat.Entry], Int) {
        do {
            _ = try dataDirectory.prepare()
        } catch {
            throw .storage(error)
        }
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: HeldFormat.maximumFileSize)
        } catch {
            // Too large, or unreadable: dropped, never a failed start.
            logger.warning("held sightings file cannot be read; dropped", metadata: ["path": "\(path)", "error": "\(error)"])
            try? write([], bootID: bootID, to: path)
            return ([], 0)
        }
        guard let bytes else { return ([], 0) }
        let contents: HeldFormat.Contents
        switch Result(catching: { () throws(HeldFormat.Refusal) in try HeldFormat.decode(bytes) }) {
        case .success(let decoded): contents = decoded
        case .failure(let refusal):
            logger.warning("held sightings file unreadable; dropped", metadata: ["path": "\(path)", "reason": "\(refusal)"])
            contents = HeldFormat.Contents(bootID: "", entries: [], damagedBytes: bytes.count)
        }
        var kept: [HeldFormat.Entry] = []
        if contents.bootID == bootID, bootID != nil {
            kept = contents.entries
            if contents.refusedEntries > 0 {
                logger.warning(
                    "held sightings: entries that checked but could not be read were skipped; the rest kept",
                    metadata: ["path": "\(path)", "entries.skipped": "\(contents.refusedEntries)"])
            }
            if contents.damagedBytes > 0 {
                logger.warning("held sightings: a damaged tail was dropped", metadata: ["path": "\(path)", "bytes.dropped": "\(contents.damagedBytes)"])
            }
            if !kept.isEmpty { logger.notice("held sightings kept from before the restart", metadata: ["windows": "\(kept.count)"]) }
        } else if !contents.entries.isEmpty {
            logger.warning(
                "held sightings from another boot dropped: their boot-clock times cannot be re-timed",
                metadata: [
                    "windows.dropped": "\(contents.entries.count)", "aggregates.dropped": "\(contents.entries.reduce(0) { $0 + $1.aggregates.count })",
                ])
        }
        // Written anew: without the tail or the other boot's windows.
        try write(kept, bootID: bootID, to: path)
        return (kept, kept.isEmpty ? contents.entries.count : 0)
    }

    /// Windows held now, and their aggregates.
    package var count: (windows: Int, aggregates: Int) { (entries.count, entries.reduce(0) { $0 + $1.aggregates.count }) }

    /// Holds one window whose times are boot-clock milliseconds; drops the oldest past 24 hours.
    package func hold(window: ScanWindowRecord, aggregates: [ContactAggregate]) throws(ContactLogError) {
        guard bootID != nil else {
            dropped += 1
            logger.debug("no boot id: a window heard on an untrusted clock is not kept")
            return
        }
        var aggregates = aggregates
        var window = window
        if aggregates.count > HeldFormat.maximumAggregates {
            // What the reader takes back: a window's cap keeps far fewer, so only a caller that
            // skipped it gets here; the strongest are kept, as the cap would have.
            logger.warning(
                "a held window over the held-entry bound: the weakest sightings dropped",
                metadata: ["aggregates": "\(aggregates.count)", "bound": "\(HeldFormat.maximumAggregates)"])
            aggregates.sort { ($0.rssi.maximum ?? Int8.min) > ($1.rssi.maximum ?? Int8.min) }
            aggregates.removeLast(aggregates.count - HeldFormat.maximumAggregates)
            aggregates.sort { $0.firstSeen < $1.firstSeen }
            window.droppedRPIs &+= window.aggregates &- UInt32(aggregates.count)
            window.aggregates = UInt32(aggregates.count)
        }
        let entry = HeldFormat.Entry(window: window, aggregates: aggregates)
        entries.append(entry)
        heldAggregates += aggregates.count
        if heldAggregates > Self.maximumAggregates {
            let before = entries.count
            var keep = Self.maximumAggregates * 9 / 10
            var first = entries.count
            while first > 0, entries[first - 1].aggregates.count <= keep {
                keep -= entries[first - 1].aggregates.count
                first -= 1
            }
            entries.removeFirst(first)
            heldAggregates = entries.reduce(0) { $0 + $1.aggregates.count }
            dropped += before - entries.count
            logger.warning(
                "held sightings over their bound: the oldest windows dropped, the clock is still not trusted",
                metadata: [
                    "aggregates.bound": "\(Self.maximumAggregates)", "windows.dropped": "\(before - entries.count)",
                    "windows.droppedSinceOpen": "\(dropped)",
                ])
            try rewrite()
            return
        }
        let newest = window.end.milliseconds
        if let oldest = entries.first, newest - oldest.window.start.milliseconds > Self.maximumSpanMilliseconds {
            let keepFrom = newest - Self.maximumSpanMilliseconds + Self.dropSlackMilliseconds
            let before = entries.count
            entries.removeAll { $0.window.start.milliseconds < keepFrom }
            heldAggregates = entries.reduce(0) { $0 + $1.aggregates.count }
            dropped += before - entries.count
            logger.warning(
                "held sightings past 24 hours dropped: the clock is still not trusted",
                metadata: ["windows.dropped": "\(before - entries.count)", "windows.droppedSinceOpen": "\(dropped)"])
            try rewrite()
            return
        }
        do {
            try appendToFile(HeldFormat.encode(entry))
        } catch {
            throw .storage(error)
        }
    }

    /// Files every held window in `log` with `offset` added to its times (boot clock to wall
    /// clock, measured once the clock is trusted), oldest first; syncs the log, then forgets them.
    /// The log refuses, counts and logs what is older than its retention.
    ///
    /// - Returns: the windows and aggregates filed.
    package func release(adding offset: Int64, into log: ContactLogWriter) async throws(ContactLogError) -> (windows: Int, aggregates: Int) {
        guard !entries.isEmpty else { return (0, 0) }
        // Taken before the first await: a second release while this one waits on the log (the
        // clock service and a scanner's window at the same moment) finds nothing to file twice.
        let batch = entries
        entries = []
        heldAggregates = 0
        var filed = 0
        var aggregates = 0
        do {
            for entry in batch {
                let moved = entry.shifted(by: offset)
                aggregates += try await log.append(window: moved.window, aggregates: moved.aggregates)
                filed += 1
            }
            try await log.sync()
        } catch {
            // What was not filed stays held, before what came meanwhile.
            entries = Array(batch[filed...]) + entries
            heldAggregates = entries.reduce(0) { $0 + $1.aggregates.count }
            throw error
        }
        // The file keeps only what was held meanwhile.
        try rewrite()
        logger.notice(
            "held sightings re-timed into the contact log", metadata: ["windows": "\(batch.count)", "aggregates": "\(aggregates)", "offset.ms": "\(offset)"])
        return (batch.count, aggregates)
    }

    /// Forgets every held window and deletes the file.
    package func clear() throws(ContactLogError) {
        entries = []
        heldAggregates = 0
        file = nil
        do {
            try AtomicFile.remove(path)
        } catch {
            throw .storage(error)
        }
    }

    private func appendToFile(_ bytes: [UInt8]) throws(FileSystemError) {
        let file: AppendOnlyFile
        if let open = self.file { file = open } else { file = try openForAppend() }
        let appended = bytes.withUnsafeBytes { raw in Result { () throws(FileSystemError) in try file.append(raw) } }
        try appended.get()
        try file.sync()
    }

    private func openForAppend() throws(FileSystemError) -> AppendOnlyFile {
        if (try? AtomicFile.size(of: path)) == nil {
            try AtomicFile.write(HeldFormat.header(bootID: bootID ?? ""), to: path)
        }
        let opened = try AppendOnlyFile(path: path, mode: .append)
        file = opened
        return opened
    }

    /// Writes the file anew with the windows held (none: no file).
    private func rewrite() throws(ContactLogError) {
        file = nil
        try Self.write(entries, bootID: bootID, to: path)
    }

    private static func write(_ entries: [HeldFormat.Entry], bootID: String?, to path: String) throws(ContactLogError) {
        do {
            if entries.isEmpty {
                try AtomicFile.remove(path)
            } else {
                try AtomicFile.write(HeldFormat.header(bootID: bootID ?? "") + entries.flatMap(HeldFormat.encode), to: path)
            }
        } catch {
            throw .storage(error)
        }
    }
}

extension HeldFormat.Entry {
    func shifted(by offset: Int64) -> Self {
        func move(_ time: UnixTime) -> UnixTime { UnixTime(milliseconds: time.milliseconds + offset) }
        var window = self.window
        window.start = move(window.start)
        window.end = move(window.end)
        window.previousScanEnd = window.previousScanEnd.map(move)
        return Self(
            window: window,
            aggregates: aggregates.map { aggregate in
                var moved = aggregate
                moved.firstSeen = move(aggregate.firstSeen)
                moved.lastSeen = move(aggregate.lastSeen)
                moved.previousScanEnd = aggregate.previousScanEnd.map(move)
                return moved
            })
    }
}
