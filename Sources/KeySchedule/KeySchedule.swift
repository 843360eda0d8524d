// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import ENCrypto
package import Logging
package import Storage

/// The device's own Temporary Exposure Keys: which key is current, the 14-day history, and its release.
///
/// Keys roll at UTC midnight: a key made at any time of day has the day's midnight interval as its
/// rolling start and covers the whole day, as Google's implementation does. Every change is written
/// to `<data-dir>/tek-history` before it is used, so a key is never broadcast that a restart would
/// forget. The wall clock and the random source are injected.
package actor KeySchedule {
    /// Days of keys kept, counting today: with 14, the key of the 15th day back is deleted.
    package let retentionDays: Int64
    /// The history file's path.
    package nonisolated let path: String

    private let clock: any WallClock
    private let random: any RandomBytesSource
    private let logger: Logger
    private var keys: [HistoryKey]
    /// Set when the file on disk had damaged records: its bytes are copied aside before the first
    /// rewrite, so that nothing once stored is destroyed by this program.
    private var damagedOriginalPending: Bool

    /// Opens (or starts) the key history in `dataDirectory`, creating the directory with mode 0700.
    ///
    /// - Throws: `KeyHistoryError.unreadable` if the file exists but is not a key history; the file is
    ///   then left untouched and the schedule does not start.
    package init(
        dataDirectory: DataDirectory, clock: any WallClock, random: any RandomBytesSource = SystemRandom(),
        retentionDays: Int64 = 14, logger: Logger = Logger(label: "gaend.keys")
    ) throws(KeyHistoryError) {
        precondition(retentionDays >= 1, "retention of \(retentionDays) days")
        do {
            if try dataDirectory.prepare() {
                logger.warning("data directory mode tightened to 0700", metadata: ["path": "\(dataDirectory.path)"])
            }
        } catch {
            throw .storage(error)
        }
        self.path = dataDirectory.path(of: KeyHistoryFile.name)
        self.clock = clock
        self.random = random
        self.retentionDays = retentionDays
        self.logger = logger
        let contents = try KeyHistoryFile.read(path)
        self.keys = Self.ordered(contents?.keys ?? [])
        self.damagedOriginalPending = !(contents?.damagedRecords.isEmpty ?? true)
        if let contents, !contents.damagedRecords.isEmpty {
            logger.error(
                "key history has damaged records; they were skipped, the rest is kept",
                metadata: [
                    "path": "\(path)", "keys.damaged": "\(contents.damagedRecords.count)",
                    "keys.kept": "\(contents.keys.count)",
                ])
        }
    }

    /// The daemon's way in: as `init`, but a file that is not a key history (a damaged header, or
    /// one past the size limit) is moved aside as `tek-history.unreadable-<unix seconds>`, kept
    /// byte for byte, and a new history is started, so that no data file stops gaend from starting.
    /// The tools use `init`, which leaves such a file as it is.
    package static func openSettingAside(
        dataDirectory: DataDirectory, clock: any WallClock, logger: Logger = Logger(label: "gaend.keys")
    ) throws(KeyHistoryError) -> KeySchedule {
        do {
            return try KeySchedule(dataDirectory: dataDirectory, clock: clock, logger: logger)
        } catch {
            guard case .unreadable(let path, let reason) = error else { throw error }
            let aside = path + ".unreadable-\(clock.now().seconds)"
            do {
                try AtomicFile.move(path, to: aside)
            } catch {
                throw .storage(error)
            }
            logger.error(
                "key history unreadable; moved aside, a new history starts (keys of the old one cannot be shared)",
                metadata: ["reason": "\(reason)", "movedTo": "\(aside)"])
            return try KeySchedule(dataDirectory: dataDirectory, clock: clock, logger: logger)
        }
    }

    /// Told when the key on the air stopped being the current one before its day ended: a release
    /// cut it (or a reset deleted it). The beacon rotates its address and RPI at once then (issue
    /// 53: the released key's RPI stayed on air 14 more minutes, telling whoever held the published
    /// key which device had just reported).
    package nonisolated let replacements = KeyReplacements()

    /// The keys held now, oldest first. Read-only: nothing is pruned or made.
    package func history() -> [HistoryKey] { keys }

    /// The key to broadcast with now. Makes (and stores) a new key when none covers the current
    /// interval: at the first call, after UTC midnight, and after a release cut the last one short.
    /// Keys past the retention are deleted on the way.
    package func currentKey() throws(KeyHistoryError) -> TemporaryExposureKey {
        let interval = try currentInterval()
        var changed = pruneExpired(today: interval.utcDay)
        let key: TemporaryExposureKey
        if let current = keys.last(where: { $0.key.isValid(during: interval) }) {
            key = current.key
        } else {
            key = try makeKey(for: interval)
            changed = true
        }
        if changed { try persist() }
        return key
    }

    /// Releases the history for sharing after a positive test: every retained key whose intervals are
    /// past, plus the current key cut short to the intervals already over (`ENIN − start`), which
    /// then stops being used; a new key with the same rolling start takes its place at once, so the
    /// released key is never broadcast again. If the current key has no whole interval behind it yet
    /// (the first 10 minutes of the UTC day), it is neither released nor replaced.
    ///
    /// The current key is cut **at most once a UTC day** (issue 53): a second release the same day
    /// (a share retried after the key server failed, `gaenctl keys`, a pre-authorized release)
    /// releases the same keys as the first, the day's cut key among them, and leaves the key that
    /// replaced it on the air; it is released whole by a release after its day. Cut at every release,
    /// three failed shares made four keys of one start, which the key server refuses (it allows 3,
    /// the reference's MAX_SAME_START_INTERVAL_KEYS), so that whoever could make a server fail three
    /// times kept a person who had just tested positive from sharing for 14 days; and two cuts in
    /// one interval released a key without the interval it was broadcast in. A history of an
    /// earlier version with more than 3 keys of one start releases 3 of them (`atMostThreePerStart`).
    ///
    /// - Returns: the released keys, oldest first.
    package func releaseDiagnosisKeys() throws(KeyHistoryError) -> [TemporaryExposureKey] {
        let interval = try currentInterval()
        _ = pruneExpired(today: interval.utcDay)
        var released = keys.filter { $0.key.end <= interval }.map(\.key)
        var replaced = false
        let cutToday = keys.contains { $0.shortenedByRelease && $0.key.rollingStartIntervalNumber.utcDay == interval.utcDay }
        if cutToday {
            logger.info("keys already released today: the current key stays on the air and is released after its day")
        } else if let index = keys.lastIndex(where: { $0.key.isValid(during: interval) }) {
            let elapsed = UInt32(keys[index].key.rollingStartIntervalNumber.distance(to: interval))
            if elapsed >= 1 {
                keys[index].key.rollingPeriod = elapsed
                keys[index].shortenedByRelease = true
                released.append(keys[index].key)
                _ = try makeKey(for: interval)
                replaced = true
                logger.info(
                    "current key released with a shortened rolling period; a new key replaces it",
                    metadata: ["key.rollingPeriod": "\(elapsed)"])
            }
        }
        try persist()
        if replaced { replacements.record() }
        return Self.atMostThreePerStart(released).sorted { $0.rollingStartIntervalNumber < $1.rollingStartIntervalNumber }
    }

    /// At most 3 keys of one rolling start, as key servers accept: those covering the most
    /// intervals, the earliest made first among equals. Only a history written before the
    /// once-a-day cut can hold more.
    static func atMostThreePerStart(_ keys: [TemporaryExposureKey]) -> [TemporaryExposureKey] {
        var byStart = [UInt32: [(offset: Int, key: TemporaryExposureKey)]]()
        for (offset, key) in keys.enumerated() { byStart[key.rollingStartIntervalNumber.rawValue, default: []].append((offset, key)) }
        let kept = byStart.values.flatMap { group in
            group.sorted { ($0.key.rollingPeriod, -$0.offset) > ($1.key.rollingPeriod, -$1.offset) }.prefix(3)
        }
        return kept.sorted { $0.offset < $1.offset }.map(\.key)
    }

    /// Every retained key including the current one, whole and unchanged: what Apple's
    /// `getTestDiagnosisKeys` returns, for testing only. Nothing is cut short or replaced.
    package func testDiagnosisKeys() throws(KeyHistoryError) -> [TemporaryExposureKey] {
        _ = try currentKey()
        return keys.map(\.key)
    }

    /// Deletes every key; the next `currentKey()` makes a new one.
    package func reset() throws(KeyHistoryError) {
        keys = []
        damagedOriginalPending = false
        do {
            try AtomicFile.remove(path)
        } catch {
            throw .storage(error)
        }
        logger.notice("key history reset")
        replacements.record()
    }

    /// Deletes keys older than the retention, at start-up and once a day.
    ///
    /// - Returns: how many keys were deleted.
    @discardableResult
    package func pruneExpiredKeys() throws(KeyHistoryError) -> Int {
        // Nothing is deleted by a clock that cannot be trusted (a wrong date would delete every key).
        guard clock.distrust == nil else { return 0 }
        let before = keys.count
        if pruneExpired(today: try currentInterval().utcDay) { try persist() }
        return before - keys.count
    }

    // MARK: - Private

    /// The interval of a trusted clock: no key is made, handed out, released or pruned on one that
    /// is not.
    private func currentInterval() throws(KeyHistoryError) -> ENIntervalNumber {
        if let distrust = clock.distrust { throw .clockUntrusted(distrust) }
        let now = clock.now()
        guard let interval = ENIntervalNumber(containing: now) else {
            throw .clockOutOfRange(milliseconds: now.milliseconds)
        }
        return interval
    }

    /// Drops keys of days more than `retentionDays − 1` before `today`; returns whether any went.
    private func pruneExpired(today: UTCDay) -> Bool {
        let before = keys.count
        keys.removeAll { $0.key.utcDay.distance(to: today) >= retentionDays }
        if keys.count != before {
            logger.debug("expired keys deleted", metadata: ["keys.deleted": "\(before - keys.count)"])
        }
        return keys.count != before
    }

    private func makeKey(for interval: ENIntervalNumber) throws(KeyHistoryError) -> TemporaryExposureKey {
        let keyData: Bytes16
        do {
            keyData = try random.bytes16()
        } catch {
            throw .random(error)
        }
        // The rolling start is the UTC midnight interval even in the middle of the day.
        let key = try! TemporaryExposureKey(keyData: keyData, rollingStartIntervalNumber: interval.rollingStart)
        if keys.contains(where: { $0.key.rollingStartIntervalNumber > interval }) {
            logger.warning(
                "wall clock is behind the newest key; making a key for the clock's day",
                metadata: ["interval": "\(interval)"])
        }
        keys.append(HistoryKey(key: key, created: clock.now()))
        keys = Self.ordered(keys)
        logger.debug("new temporary exposure key", metadata: ["key.rollingStart": "\(key.rollingStartIntervalNumber)"])
        return key
    }

    private func persist() throws(KeyHistoryError) {
        do {
            if damagedOriginalPending {
                let aside = path + ".damaged-\(clock.now().seconds)"
                try AtomicFile.copy(path, to: aside, limit: KeyHistoryFile.maximumSize)
                logger.warning("damaged key history copied aside before rewriting", metadata: ["path": "\(aside)"])
                damagedOriginalPending = false
            }
            try AtomicFile.write(KeyHistoryFile.encode(keys), to: path)
        } catch {
            throw .storage(error)
        }
    }

    /// Oldest start first; keys of the same start in the order they were made.
    private static func ordered(_ keys: [HistoryKey]) -> [HistoryKey] {
        keys.enumerated().sorted {
            ($0.element.key.rollingStartIntervalNumber, $0.element.created, $0.offset)
                < ($1.element.key.rollingStartIntervalNumber, $1.element.created, $1.offset)
        }.map(\.element)
    }
}
