// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Conditions
package import Logging
package import Storage

/// The only writer of a contact log: `<data-dir>/contacts/`, one segment per UTC day.
///
/// Records are only ever appended. The records of a scan window are encoded together and written
/// with one `write` per segment they touch; the durability policy then decides whether to fsync.
/// On open, every segment is checked: a torn tail is cut off (and logged with its byte counts), after
/// copying the segment aside if the tail is more than a torn record's worth; a damaged record in the
/// middle is counted and left in place; a segment whose header is unreadable is moved aside. An
/// exclusive lock keeps a second writer out.
package actor ContactLogWriter {
    package nonisolated let directory: DataDirectory
    package let policy: DurabilityPolicy
    package let retentionDays: Int64
    /// What opening the log found and repaired.
    package let recovery: RecoveryReport

    let clock: any WallClock
    let logger: Logger
    private let lock: AppendOnlyFile
    var segments: [UTCDay: AppendOnlyFile] = [:]
    var unsynced: Set<UTCDay> = []
    /// For `activity()`: the last window's end, and aggregates filed under a day (today's).
    var lastWindowEnd: UnixTime? { didSet { changes.signal() } }
    var todayCount: (day: UTCDay, count: Int) { didSet { changes.signal() } }
    /// Signalled when `activity()` may answer otherwise: a window written, the log erased.
    package nonisolated let changes = Changes()
    private var windowsSinceSync = 0
    private var lastPruneDay: UTCDay?
    /// Records refused since open because their times did not fit (each logged as a counted warning).
    package private(set) var refusedRecords = 0
    /// Records lost since open because an append failed (a full disk): each failed append is cut
    /// back to the record before it, so the records after it are whole again once there is room.
    package private(set) var lostRecords = 0
    /// Failed appends in a row: the first is a warning, the end of the streak a notice.
    private var failingAppends = 0
    /// Aggregates appended since open, and how many of them are known durable.
    package private(set) var appendedAggregates = 0
    package private(set) var syncedAggregates = 0

    /// The contacts directory of a data directory.
    package static func contactsDirectory(in dataDirectory: DataDirectory) -> DataDirectory {
        dataDirectory.subdirectory("contacts")
    }

    /// Opens the log in `dataDirectory` (creating `contacts/` with mode 0700), takes the writer's lock,
    /// repairs what a crash left, and deletes segments past the retention.
    package init(
        dataDirectory: DataDirectory, clock: any WallClock, policy: DurabilityPolicy = .everyWindow,
        retentionDays: Int64 = 14, logger: Logger = Logger(label: "gaend.contacts")
    ) throws(ContactLogError) {
        precondition(retentionDays >= 1, "retention of \(retentionDays) days")
        let directory = Self.contactsDirectory(in: dataDirectory)
        self.directory = directory
        self.clock = clock
        self.policy = policy
        self.retentionDays = retentionDays
        self.logger = logger
        do {
            try dataDirectory.prepare()
            try directory.prepare()
            lock = try AppendOnlyFile(path: directory.path(of: ".lock"), mode: .append)
        } catch {
            throw .storage(error)
        }
        do {
            try lock.lockExclusively()
        } catch {
            throw error.isLockHeld ? .locked(path: directory.path) : .storage(error)
        }
        let today = UTCDay(containing: clock.now())
        lastPruneDay = clock.distrust == nil ? today : nil
        todayCount = (today, 0)
        var report = RecoveryReport()
        try Self.recover(directory: directory, now: clock.now(), retentionDays: retentionDays, distrust: clock.distrust, logger: logger, into: &report)
        recovery = report
        // Today's sightings so far, for the API's SightingsToday after a restart.
        if let counts = try? ContactLogStatistics(reader: ContactLogReader(dataDirectory: dataDirectory), days: today...today).days[today] {
            todayCount.count = counts.aggregates
        }
    }

    /// Appends one scan window and its aggregates, each filed under the UTC day of its own start,
    /// then syncs if the policy says so. A record whose times cannot be stored (before 1970, an end
    /// before its start, longer than an hour, or older than the retention) is refused, counted and
    /// logged; the rest are written.
    ///
    /// - Returns: the aggregates written.
    @discardableResult
    package func append(window: ScanWindowRecord, aggregates: [ContactAggregate]) throws(ContactLogError) -> Int {
        let today = UTCDay(containing: clock.now())
        var buffers: [UTCDay: [UInt8]] = [:]
        var written = 0
        var refused = 0
        for aggregate in aggregates {
            if encode(
                day: aggregate.day, today: today, into: &buffers,
                { (bytes, day) throws(RecordCodec.Refusal) in
                    try RecordCodec.append(aggregate, day: day, to: &bytes)
                })
            {
                written += 1
            } else {
                refused += 1
            }
        }
        if !encode(
            day: window.day, today: today, into: &buffers,
            { (bytes, day) throws(RecordCodec.Refusal) in
                try RecordCodec.append(window, day: day, to: &bytes)
            })
        {
            refused += 1
        }
        if refused > 0 {
            refusedRecords += refused
            logger.warning(
                "records refused: their times do not fit a day segment",
                metadata: ["records.refused": "\(refused)", "records.refusedSinceOpen": "\(refusedRecords)"])
        }
        let days = buffers.sorted(by: { $0.key < $1.key })
        for (index, (day, bytes)) in days.enumerated() {
            do {
                try appendWhole(bytes, to: day)
            } catch {
                // This day's records and the later days' are lost; the earlier days' are written.
                appendFailed(error, lostRecords: days[index...].reduce(0) { $0 + $1.value.count / SegmentFormat.recordSize })
                throw .storage(error)
            }
            unsynced.insert(day)
        }
        if failingAppends > 0 {
            logger.notice("contact log appends whole again", metadata: ["appends.failed": "\(failingAppends)", "records.lostSinceOpen": "\(lostRecords)"])
            failingAppends = 0
        }
        appendedAggregates += written
        lastWindowEnd = window.end
        if todayCount.day != today { todayCount = (today, 0) }
        todayCount.count += aggregates.filter { $0.day == today }.count
        windowsSinceSync += 1
        if policy.shouldSync(afterWindows: windowsSinceSync) {
            try sync()
        }
        if today != lastPruneDay, clock.distrust == nil {
            lastPruneDay = today
            try pruneExpired()
        }
        return written
    }

    /// Makes everything appended so far durable.
    package func sync() throws(ContactLogError) {
        do {
            for day in unsynced.sorted() {
                try segments[day]?.sync()
            }
        } catch {
            throw .storage(error)
        }
        unsynced.removeAll()
        windowsSinceSync = 0
        syncedAggregates = appendedAggregates
    }

    /// Deletes segments older than the retention: at open, and once a day from `append`; nothing
    /// while the clock is not trusted. A forward step of a trusted clock past the retention is time
    /// that passed, and prunes.
    ///
    /// - Returns: the days deleted.
    @discardableResult
    package func pruneExpired() throws(ContactLogError) -> [UTCDay] {
        guard clock.distrust == nil else { return [] }
        let today = UTCDay(containing: clock.now())
        var report = RecoveryReport()
        try Self.deleteExpired(directory: directory, today: today, retentionDays: retentionDays, logger: logger, into: &report)
        for day in report.expired {
            segments[day] = nil
            unsynced.remove(day)
        }
        return report.expired
    }

    // MARK: - Private

    /// Encodes one record into the buffer of its day; `false` if it was refused.
    private func encode(
        day: UTCDay, today: UTCDay, into buffers: inout [UTCDay: [UInt8]],
        _ body: (inout [UInt8], UTCDay) throws(RecordCodec.Refusal) -> Void
    ) -> Bool {
        guard day.distance(to: today) < retentionDays else {
            logger.debug("record older than the retention refused", metadata: ["day": "\(day)"])
            return false
        }
        do {
            try body(&buffers[day, default: []], day)
            return true
        } catch {
            logger.debug("record refused", metadata: ["reason": "\(error)"])
            return false
        }
    }

    /// Appends a day's records whole or not at all: a short write (a full disk) is cut back to the
    /// size before it, so the segment stays on the record grid (issue 40: a partial record left
    /// every later one misaligned for the rest of the day). When even the cut fails, the segment
    /// is forgotten, and opened again it is checked and cut back to its grid.
    private func appendWhole(_ bytes: [UInt8], to day: UTCDay) throws(FileSystemError) {
        let segment = try segment(for: day)
        let before = try segment.size()
        do {
            try bytes.withUnsafeBytes { raw in
                Result { () throws(FileSystemError) in try segment.append(raw) }
            }.get()
        } catch {
            do {
                try segment.truncate(to: before)
            } catch {
                segments[day] = nil
                unsynced.remove(day)
            }
            throw error
        }
    }

    private func appendFailed(_ error: FileSystemError, lostRecords lost: Int) {
        lostRecords += lost
        failingAppends += 1
        let metadata: Logger.Metadata = ["error": "\(error)", "records.lost": "\(lost)", "records.lostSinceOpen": "\(lostRecords)"]
        if failingAppends == 1 {
            logger.warning("contact log append failed: the window's records are lost, the log stays whole", metadata: metadata)
        } else {
            logger.debug("contact log append failed again", metadata: metadata)
        }
    }

    /// The open segment of `day`, created with its header if it does not exist.
    private func segment(for day: UTCDay) throws(FileSystemError) -> AppendOnlyFile {
        if let segment = segments[day] { return segment }
        let path = directory.path(of: SegmentFormat.fileName(for: day))
        let file = try AppendOnlyFile(path: path, mode: .append)
        let size = try file.size()
        if size < Int64(SegmentFormat.headerSize) {
            // A new segment (or one whose header a full disk cut short): the header is made
            // durable before any record, with the directory entry, or the file is left empty.
            if size > 0 { try file.truncate(to: 0) }
            do {
                try SegmentFormat.header(for: day).withUnsafeBytes { raw in
                    Result { () throws(FileSystemError) in try file.append(raw) }
                }.get()
                try file.sync()
            } catch {
                try? file.truncate(to: 0)
                throw error
            }
            try AtomicFile.syncDirectory(directory.path)
        } else if (size - Int64(SegmentFormat.headerSize)) % Int64(SegmentFormat.recordSize) != 0 {
            // Recovery at open left every segment on a record boundary; only another hand could
            // have changed that. Cut back to the boundary rather than misalign every later record.
            let aligned = size - (size - Int64(SegmentFormat.headerSize)) % Int64(SegmentFormat.recordSize)
            logger.error("segment not on a record boundary; cut back", metadata: ["path": "\(path)", "bytes.cut": "\(size - aligned)"])
            try file.truncate(to: aligned)
        }
        segments[day] = file
        return file
    }

    private static func recover(
        directory: DataDirectory, now: UnixTime, retentionDays: Int64, distrust: String?, logger: Logger, into report: inout RecoveryReport
    ) throws(ContactLogError) {
        let today = UTCDay(containing: now)
        if let distrust {
            // A wall clock days ahead would delete a log that is not old at all.
            logger.notice("contact log retention held until the clock is trusted", metadata: ["reason": "\(distrust)"])
        } else {
            try deleteExpired(directory: directory, today: today, retentionDays: retentionDays, logger: logger, into: &report)
        }
        for (day, name) in try segmentFiles(in: directory) {
            let path = directory.path(of: name)
            let scan = SegmentReader.scan(path: path, day: day) { _ in }
            if scan.unreadable != nil, scan.size < Int64(SegmentFormat.headerSize) {
                // A crash while the header of a new segment was written: no record can be in it, so
                // it is emptied and gets its header again on the next append.
                do {
                    let file = try AppendOnlyFile(path: path, mode: .append)
                    try file.truncate(to: 0)
                    try file.sync()
                } catch {
                    throw .storage(error)
                }
                report.truncated[day] = scan.size
                logger.warning("segment with a torn header emptied", metadata: ["path": "\(path)", "bytes.cut": "\(scan.size)"])
                continue
            }
            if let reason = scan.unreadable {
                let aside: String
                do {
                    report.asideDeleted += try SetAsideFiles.makeRoom(for: day, in: directory)
                    aside = try SetAsideFiles.move(segment: path, day: day, now: now, in: directory)
                } catch {
                    throw .storage(error)
                }
                report.setAside[day] = reason
                logger.error(
                    "segment unreadable; moved aside, a new one will be started", metadata: ["path": "\(path)", "reason": "\(reason)", "movedTo": "\(aside)"])
                continue
            }
            if let damage = scan.headerDamage {
                // Kept and appended to: its records are read one by one by their own checksums.
                logger.error(
                    "segment header damaged; its records are still read and new ones appended", metadata: ["path": "\(path)", "reason": "\(damage)"])
            }
            if scan.tornTailBytes > 0 {
                try repairTail(of: path, day: day, scan: scan, directory: directory, now: now, logger: logger, into: &report)
            }
            if scan.corruptRecords > 0 {
                report.corruptRecords[day] = scan.corruptRecords
                logger.error(
                    "damaged records in a segment skipped; the rest is read",
                    metadata: [
                        "path": "\(path)", "records.corrupt": "\(scan.corruptRecords)",
                        "firstAt": "\(scan.problems.first { $0.kind == .corrupt }?.offset ?? 0)",
                    ])
            }
            if scan.outOfDayRecords > 0 {
                report.outOfDayRecords[day] = scan.outOfDayRecords
                logger.warning("records outside their segment's day skipped", metadata: ["path": "\(path)", "records.outOfDay": "\(scan.outOfDayRecords)"])
            }
        }
    }

    /// Cuts the torn tail of a segment. A torn record's worth (less than two records: what an
    /// interrupted append leaves) is cut at once; anything more is damage that no crash of this
    /// writer leaves, so the segment is first copied aside, and if that copy cannot be made the
    /// damage is kept rather than lost.
    private static func repairTail(
        of path: String, day: UTCDay, scan: SegmentReport, directory: DataDirectory, now: UnixTime, logger: Logger,
        into report: inout RecoveryReport
    ) throws(ContactLogError) {
        var metadata: Logger.Metadata = ["path": "\(path)", "bytes.before": "\(scan.size)"]
        var cutTo = scan.intactEnd
        if scan.tornTailBytes >= Int64(tornRecordLimit) {
            do {
                report.asideDeleted += try SetAsideFiles.makeRoom(for: day, in: directory)
                let aside = try SetAsideFiles.copy(segment: path, size: scan.size, day: day, now: now, in: directory)
                report.copiedAside[day] = aside
                metadata["copiedTo"] = "\(aside)"
            } catch {
                // Without a copy nothing is cut but a partial record, so that appends stay on the
                // record boundary. The damage stays where it is; once a record is appended after
                // it, readers skip it as damage in the middle, and it goes with its day.
                cutTo = scan.size - (scan.size - Int64(SegmentFormat.headerSize)) % Int64(SegmentFormat.recordSize)
                report.damageKept[day] = "\(error)"
                logger.error(
                    "damaged tail of a segment could not be copied aside; kept, not cut",
                    metadata: metadata.merging(["bytes.damaged": "\(cutTo - scan.intactEnd)", "reason": "\(error)"]) { $1 })
            }
        }
        guard cutTo < scan.size else { return }
        do {
            let file = try AppendOnlyFile(path: path, mode: .append)
            try file.truncate(to: cutTo)
            try file.sync()
        } catch {
            throw .storage(error)
        }
        report.truncated[day] = scan.size - cutTo
        metadata["bytes.cut"] = "\(scan.size - cutTo)"
        metadata["bytes.after"] = "\(cutTo)"
        if report.copiedAside[day] != nil {
            logger.error("damaged tail of a segment cut off after the segment was copied aside", metadata: metadata)
        } else {
            logger.warning("torn tail of a segment cut off", metadata: metadata)
        }
    }

    /// A torn tail shorter than this is a torn record's worth, cut without a copy: one record whose
    /// checksum fails and part of the next, at most.
    static let tornRecordLimit = 2 * SegmentFormat.recordSize

    private static func deleteExpired(
        directory: DataDirectory, today: UTCDay, retentionDays: Int64, logger: Logger, into report: inout RecoveryReport
    ) throws(ContactLogError) {
        for (day, name) in try segmentFiles(in: directory) where day.distance(to: today) >= retentionDays {
            do {
                try AtomicFile.remove(directory.path(of: name))
            } catch {
                throw .storage(error)
            }
            report.expired.append(day)
        }
        do {
            report.asideDeleted += try SetAsideFiles.deleteExpired(in: directory, today: today, retentionDays: retentionDays)
        } catch {
            throw .storage(error)
        }
        if !report.expired.isEmpty || !report.asideDeleted.isEmpty {
            do {
                try AtomicFile.syncDirectory(directory.path)
            } catch {
                throw .storage(error)
            }
            logger.info(
                "expired contact log segments deleted",
                metadata: ["segments.deleted": "\(report.expired.count)", "setAside.deleted": "\(report.asideDeleted.count)"])
        }
    }

    /// The segment files of the directory with their days, oldest first; other names are ignored.
    static func segmentFiles(in directory: DataDirectory) throws(ContactLogError) -> [(UTCDay, String)] {
        do {
            return try directory.entries().compactMap { name in SegmentFormat.day(ofFileName: name).map { ($0, name) } }
        } catch {
            throw .storage(error)
        }
    }
}
