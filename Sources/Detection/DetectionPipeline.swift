// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
package import KeyFiles
import Synchronization

/// What a detection produced: everything stored, scored (windows, summaries, v1), with this run's
/// files and counts. Windows carry no key or identifier.
package struct DetectionResult: Sendable {
    /// Shuffled, as the framework returns them; from every stored result of the last 14 days.
    package var windows: [ExposureWindow]
    package var dailySummaries: [DailySummary]
    package var v1Summary: V1Summary?
    package var v1Exposures: [V1ExposureInfo]
    package var perDay: [PerDayResult]
    /// The answer to "was I exposed in the last 14 days?", by the configuration's rule.
    package var verdict: ExposureVerdict
    package var statistics: MatchStatistics
    /// Each file of this run with its verdict and valid keys; only verified files of complete batches
    /// were matched. The keys of a file that did not verify are not read: 0.
    package var files: [KeyFileOutcome]
    /// Corona-Warn-App's result, when its rule is the configuration's.
    package var coronaWarnApp: CoronaWarnAppRiskResult? = nil

    /// The files of this run that were not matched, and why; `nil` when every file was.
    package var refusals: KeyFileRefusals? { KeyFileRefusals(files) }

    /// The exposure days, oldest first.
    package var exposureDays: [UTCDay] { verdict.dayList }
    /// When the latest exposure that counts began (its window's first sighting); `nil` when none.
    package var lastExposure: UnixTime? { verdict.lastExposure }
}

/// One key file of a run: its name, verdict, valid keys (0 when they were not read) and the known
/// app signatures its archive carried beside the export pair, which were not read
/// (`KeyFileArchive.knownAppSignatures`: the Dutch `content.sig`).
package struct KeyFileOutcome: Sendable, Equatable {
    package var name: String
    package var verdict: Verdict
    package var keys: Int
    package var ignoredEntries: [String]

    package init(name: String, verdict: Verdict, keys: Int, ignoredEntries: [String] = []) {
        self.name = name
        self.verdict = verdict
        self.keys = keys
        self.ignoredEntries = ignoredEntries
    }

    /// The verdict as the tools and the journal print it, the ignored entries named.
    package var verdictText: String {
        ignoredEntries.isEmpty ? "\(verdict)" : "\(verdict) (ignored: \(ignoredEntries.joined(separator: ", ")), an app's own signature)"
    }
}

/// A run's outcome: the result, the results to store, and the files not to mark processed.
package struct DetectionRun: Sendable {
    package var result: DetectionResult
    package var results: ExposureResults
    /// Verified files whose batch is incomplete: not matched, to be tried again when the rest comes.
    package var deferredFiles: [String]
}

/// Why a run could not complete.
package enum DetectionError: Error, Sendable, CustomStringConvertible {
    case contactLog(ContactLogError)
    case keyFile(name: String, KeyFileError)
    case cancelled

    package var description: String {
        switch self {
        case .contactLog(let error): return "\(error)"
        case .keyFile(let name, let error): return "\(name): \(error)"
        case .cancelled: return "the run was cancelled"
        }
    }
}

extension DetectionError: Equatable {
    /// A contact log error carries a file system cause without equality: compared by what it says.
    package static func == (lhs: DetectionError, rhs: DetectionError) -> Bool {
        switch (lhs, rhs) {
        case (.contactLog(let left), .contactLog(let right)): "\(left)" == "\(right)"
        case (.keyFile(let leftName, let left), .keyFile(let rightName, let right)): leftName == rightName && left == right
        case (.cancelled, .cancelled): true
        default: false
        }
    }
}

/// One detection pass, offline: key files and the stored results in, the results to store and
/// their scores out. The worker adds downloading, budgets and persistence around it;
/// `gaenctl tools match` runs it as it is, with nothing stored.
///
/// As GMS's `ExposureMatchingTracer` (docs/detection.md, "Results across runs"): a key with a
/// stored result is not matched again, a later copy of it (or of a key matched earlier in the same
/// run) can only revise its report type, and `revised_keys` revise stored results and are never
/// matched. Files are matched one at a time, their keys streamed from export.bin a round at a time
/// (`keysPerRound`), so a file's keys are never all in memory, and export.bin is streamed from the
/// archive (`JudgedKeyFile`, `KeyStream`), so neither is the file; a file's keys are read only
/// after its signature verified over export.bin's raw bytes. A file that does not verify, or whose batch is
/// incomplete, is not matched and is reported with its verdict (and 0 keys when they were not read).
package struct DetectionPipeline: Sendable {
    package var reader: ContactLogReader
    package var policy: SignaturePolicy
    package var parallelism: Int

    package init(reader: ContactLogReader, policy: SignaturePolicy, parallelism: Int) {
        self.reader = reader
        self.policy = policy
        self.parallelism = parallelism
    }

    /// A run over files held in memory (the tools, the tests).
    package func run(
        files: [(name: String, bytes: [UInt8])], configuration: ExposureConfiguration, now: UnixTime,
        results stored: ExposureResults = ExposureResults(), progress: (@Sendable (_ keysDone: Int, _ keysTotal: Int) -> Void)? = nil
    ) async throws(DetectionError) -> DetectionRun {
        try await run(
            sources: files.map { file in KeyFileSource(name: file.name) { file.bytes } }, configuration: configuration, now: now, results: stored,
            progress: progress)
    }

    /// A run over files read when they are needed, one at a time (the daemon's, from its spool on
    /// disk): a run of many files holds one archive and its export.bin at a time, whatever their
    /// number.
    package func run(
        sources files: [KeyFileSource], configuration: ExposureConfiguration, now: UnixTime,
        results stored: ExposureResults = ExposureResults(), progress: (@Sendable (_ keysDone: Int, _ keysTotal: Int) -> Void)? = nil
    ) async throws(DetectionError) -> DetectionRun {
        var partitions: MatchingPartitions
        do {
            partitions = try MatchingPartitions(reader: reader, budgetBytes: indexBudgetBytes)
        } catch {
            throw .contactLog(error)
        }
        // Revisions read report types as the windows do (score uses the same default).
        let v2 = configuration.v2 ?? V2Configuration()
        var results = stored
        var statistics = MatchStatistics()
        var verdicts = [KeyFileOutcome]()
        // First pass: verdicts and batch headers. A file's keys are read only when it verified, and
        // then only validated and counted (none kept), so that a file that fails past its header
        // is refused before anything of it is matched.
        var verifiedHeaders = [(name: String, export: KeyExport)]()
        // Files whose first pass counted revised keys: only these are read again for them.
        var withRevisions = Set<String>()
        for source in files {
            let name = source.name
            do {
                let file = try JudgedKeyFile(archive: try source.archive(), policy: policy)
                guard file.verdict.isVerified else {
                    verdicts.append(KeyFileOutcome(name: name, verdict: file.verdict, keys: 0, ignoredEntries: file.ignoredEntries))
                    continue
                }
                let keys = try file.check().keys
                if file.revisedKeyMessages > 0 { withRevisions.insert(name) }
                verdicts.append(KeyFileOutcome(name: name, verdict: file.verdict, keys: keys, ignoredEntries: file.ignoredEntries))
                verifiedHeaders.append((name, file.header))
            } catch {
                verdicts.append(KeyFileOutcome(name: name, verdict: .invalid("\(error)"), keys: 0))
            }
        }
        let incomplete = BatchCompleteness.incomplete(verifiedHeaders)
        for (position, entry) in verdicts.enumerated() {
            if let reason = incomplete[entry.name] { verdicts[position].verdict = .invalid(reason) }
        }
        // Second pass: each verified file of a complete batch, read again and matched a chunk of
        // keys at a time (the same bytes: the first pass's verdict stands). A log larger than one
        // index's budget is matched an index at a time, oldest days first: every index but the
        // last only collects what it holds of each key, and the last judges it all.
        let matched = files.filter { source in verdicts.contains(where: { $0.name == source.name && $0.verdict.isVerified }) }
        var index = partitions.nextIndex()
        var earlier = PartialHits()
        while !partitions.isDone {
            do {
                var hits = PartialHits()
                let collector = Matcher(index: index!, logDays: partitions.days, earlier: PartialHits())
                for source in matched {
                    try await collectKeys(of: source, by: collector, skipping: stored, into: &hits, statistics: &statistics)
                }
                earlier.merge(hits)
            }
            // One index at a time: this one is let go before the next is built.
            index = nil
            index = partitions.nextIndex()
        }
        let matcher = Matcher(index: index!, logDays: partitions.days, earlier: earlier)
        var progressState = (done: 0, total: 0)
        for source in matched {
            let name = source.name
            let entries: KeyFileEntries
            do {
                entries = try KeyFileEntries(archive: source.archive())
            } catch {
                throw .keyFile(name: name, error)
            }
            try await matchKeys(
                of: entries, name: name, matcher: matcher, into: &results, now: now, v2: v2, revisions: withRevisions.contains(name),
                statistics: &statistics, progressState: &progressState, progress: progress)
        }
        results.age(today: UTCDay(containing: now))
        let result = Self.score(results, statistics: statistics, files: verdicts, configuration: configuration, now: now)
        let deferred = verdicts.compactMap { incomplete[$0.name] == nil ? nil : $0.name }
        return DetectionRun(result: result, results: results, deferredFiles: deferred)
    }

    /// What one index before the last holds of a file's keys (those without a result stored before
    /// the run: the others can only revise theirs), read a round at a time.
    func collectKeys(
        of source: KeyFileSource, by collector: Matcher, skipping stored: ExposureResults, into hits: inout PartialHits,
        statistics: inout MatchStatistics
    ) async throws(DetectionError) {
        let name = source.name
        let keys: KeyStream
        do {
            keys = try KeyStream(KeyFileEntries(archive: source.archive()))
        } catch {
            throw .keyFile(name: name, error)
        }
        func nextRound() throws(DetectionError) -> [DiagnosisKey] { try self.round(of: keys, name: name) { !stored.hasResult(for: $0.key.keyData) } }
        var round = try nextRound()
        while !round.isEmpty {
            // The next round is decoded on this task while the matching tasks collect this one:
            // decoding is serial, and the cores it leaves idle are the matcher's (issue 55).
            let batch = round
            async let collected = collector.collect(batch, parallelism: parallelism)
            let next: [DiagnosisKey]
            do {
                next = try nextRound()
            } catch {
                _ = try? await collected
                throw error
            }
            do {
                let (found, counts) = try await collected
                hits.union(found)
                statistics.rpisDerived += counts.rpisDerived
                statistics.candidates += counts.candidates
            } catch {
                throw .cancelled
            }
            round = next
        }
    }

    /// The next `keysPerRound` keys of a file that `keeping` keeps (an empty round: the file is done).
    func round(of keys: KeyStream, name: String, keeping: (DiagnosisKey) -> Bool = { _ in true }) throws(DetectionError) -> [DiagnosisKey] {
        var round = [DiagnosisKey]()
        round.reserveCapacity(keysPerRound)
        do {
            while round.count < keysPerRound, let key = try keys.next() {
                if keeping(key) { round.append(key) }
            }
        } catch {
            throw .keyFile(name: name, error)
        }
        return round
    }

    /// The bytes one matching index may take (`MatchingPartitions`).
    package var indexBudgetBytes = MatchingPartitions.defaultBudgetBytes

    /// Keys matched per `Matcher.match` call: 8,192 for each task, so that every task has a chunk.
    var keysPerRound: Int { Self.keysPerTask * max(1, parallelism) }
    static let keysPerTask = 8192

    /// Matches one file's keys, a round of `keysPerRound` at a time in the file's order, then
    /// applies its revised keys. As if the file were matched whole: a key is taken as having a
    /// stored result only when it had one before this file (so a second copy in the file is
    /// matched, as the first, and then revises it), and each round's matches are stored in the
    /// file's order before the next round is read.
    func matchKeys(
        of entries: KeyFileEntries, name: String, matcher: Matcher, into results: inout ExposureResults, now: UnixTime, v2: V2Configuration,
        revisions: Bool = true, statistics: inout MatchStatistics, progressState: inout (done: Int, total: Int),
        progress: (@Sendable (_ keysDone: Int, _ keysTotal: Int) -> Void)?
    ) async throws(DetectionError) {
        let keys: KeyStream
        do {
            keys = try KeyStream(entries)
        } catch {
            throw .keyFile(name: name, error)
        }
        var storedInThisFile = Set<Bytes16>()
        func nextRound() throws(DetectionError) -> [DiagnosisKey] { try self.round(of: keys, name: name) }
        var round = try nextRound()
        while !round.isEmpty {
            // Which keys have a result is decided here, after the previous round was stored.
            var toMatch = [DiagnosisKey]()
            var toRevise = [DiagnosisKey]()
            for key in round {
                let keyData = key.key.keyData
                if results.hasResult(for: keyData), !storedInThisFile.contains(keyData) { toRevise.append(key) } else { toMatch.append(key) }
            }
            statistics.keysWithStoredResult += toRevise.count
            progressState.total += toMatch.count
            let counter = ProgressCounter(start: progressState.done)
            let knownTotal = progressState.total
            let found: [KeyMatch]
            let batch = toMatch
            // The next round is decoded while this one is matched, as in `collectKeys`.
            async let matching = matcher.match(batch, parallelism: parallelism) { done in progress?(counter.add(done), knownTotal) }
            let next: [DiagnosisKey]
            do {
                next = try nextRound()
            } catch {
                _ = try? await matching
                throw error
            }
            do {
                let (matches, counts) = try await matching
                found = matches
                statistics.add(counts)
            } catch {
                throw .cancelled
            }
            progressState.done += toMatch.count
            Self.store(found, copies: toMatch, into: &results, now: now, v2: v2, statistics: &statistics, stored: &storedInThisFile)
            for key in toRevise where results.revise(key, configuration: v2) { statistics.revisions += 1 }
            round = next
        }
        // revised_keys relabel what is stored and are never matched (GMS matches `keys` only). A
        // file whose first pass counted none is not inflated again for them (issue 55).
        guard revisions else { return }
        do {
            let revisedKeys = try KeyStream(entries, revised: true)
            while let key = try revisedKeys.next() {
                if results.revise(key, configuration: v2) {
                    statistics.revisions += 1
                } else if !results.hasResult(for: key.key.keyData) {
                    statistics.revisedKeysWithoutResult += 1
                }
            }
        } catch {
            throw .keyFile(name: name, error)
        }
    }

    /// Stores a round's new matches in the order of the file, so that two copies of one key in a
    /// file store the first and let the second revise it, whatever order the matching tasks
    /// finished in. `stored` gathers the keys stored.
    static func store(
        _ found: [KeyMatch], copies keys: [DiagnosisKey], into results: inout ExposureResults, now: UnixTime, v2: V2Configuration,
        statistics: inout MatchStatistics, stored: inout Set<Bytes16>
    ) {
        guard !found.isEmpty else { return }
        var sightings = [Bytes16: [MatchedSighting]]()
        for match in found { sightings[match.key.key.keyData] = match.sightings }
        for key in keys {
            guard let matched = sightings[key.key.keyData] else { continue }
            if results.insert(KeyMatch(key: key, sightings: matched), at: now) {
                statistics.newResults += 1
                stored.insert(key.key.keyData)
            } else if results.revise(key, configuration: v2) {
                statistics.revisions += 1
            }
        }
    }

    /// Keys done across the matching tasks of one file.
    final class ProgressCounter: Sendable {
        private let done: Mutex<Int>
        init(start: Int) { done = Mutex(start) }
        func add(_ count: Int) -> Int {
            done.withLock {
                $0 += count; return $0
            }
        }
    }
}
