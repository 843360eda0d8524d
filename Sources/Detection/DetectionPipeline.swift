// SPDX-License-Identifier: GPL-3.0-or-later

public import ContactLog
public import ENCore
public import KeyFiles
import Synchronization

/// What a detection produced: everything stored, scored (windows, summaries, v1), with this run's
/// files and counts. Windows carry no key or identifier.
public struct DetectionResult: Sendable {
    /// Shuffled, as the framework returns them; from every stored result of the last 14 days.
    public var windows: [ExposureWindow]
    public var dailySummaries: [DailySummary]
    public var v1Summary: V1Summary?
    public var v1Exposures: [V1ExposureInfo]
    public var perDay: [PerDayResult]
    /// The answer to "was I exposed in the last 14 days?": the UTC days with an exposure that
    /// scores under the configuration, oldest first.
    public var exposureDays: [UTCDay]
    /// When the latest exposure that scores began (its window's first sighting); `nil` when none.
    public var lastExposure: UnixTime?
    public var statistics: MatchStatistics
    /// Each file of this run with its verdict; only verified files of complete batches were matched.
    public var files: [(name: String, verdict: Verdict, keys: Int)]
}

/// A run's outcome: the result, the results to store, and the files not to mark processed.
public struct DetectionRun: Sendable {
    public var result: DetectionResult
    public var results: ExposureResults
    /// Verified files whose batch is incomplete: not matched, to be tried again when the rest comes.
    public var deferredFiles: [String]
}

/// Why a run could not complete.
public enum DetectionError: Error, Sendable, CustomStringConvertible {
    case contactLog(ContactLogError)
    case keyFile(name: String, KeyFileError)
    case cancelled

    public var description: String {
        switch self {
        case .contactLog(let error): return "\(error)"
        case .keyFile(let name, let error): return "\(name): \(error)"
        case .cancelled: return "the run was cancelled"
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
/// matched. Files are matched one at a time, so only one file's keys are in memory; a file that does
/// not verify, or whose batch is incomplete, is not matched and is reported with its verdict.
public struct DetectionPipeline: Sendable {
    public var reader: ContactLogReader
    public var policy: SignaturePolicy
    public var parallelism: Int

    public init(reader: ContactLogReader, policy: SignaturePolicy, parallelism: Int) {
        self.reader = reader
        self.policy = policy
        self.parallelism = parallelism
    }

    public func run(
        files: [(name: String, bytes: [UInt8])], configuration: ExposureConfiguration, now: UnixTime,
        results stored: ExposureResults = ExposureResults(), progress: (@Sendable (_ keysDone: Int, _ keysTotal: Int) -> Void)? = nil
    ) async throws(DetectionError) -> DetectionRun {
        let index: MatchingIndex
        do {
            index = try MatchingIndex(reader: reader)
        } catch {
            throw .contactLog(error)
        }
        let matcher = Matcher(index: index)
        let whenMissing = ReportType(rawValue: Int32(configuration.v2?.reportTypeWhenMissing?.rawValue ?? 0)) ?? .unknown
        var results = stored
        var statistics = MatchStatistics()
        var verdicts = [(name: String, verdict: Verdict, keys: Int)]()
        // First pass: verdicts and batch headers, keys dropped as soon as read.
        var verifiedHeaders = [(name: String, export: KeyExport)]()
        for (name, bytes) in files {
            do {
                let file = try KeyFile(zip: bytes, policy: policy)
                verdicts.append((name, file.verdict, file.export.keys.count))
                guard file.verdict.isVerified else { continue }
                var header = file.export
                header.keys = []
                header.revisedKeys = []
                verifiedHeaders.append((name, header))
            } catch {
                verdicts.append((name, .invalid("\(error)"), 0))
            }
        }
        let incomplete = BatchCompleteness.incomplete(verifiedHeaders)
        for (position, entry) in verdicts.enumerated() {
            if let reason = incomplete[entry.name] { verdicts[position].verdict = .invalid(reason) }
        }
        // Second pass: each verified file of a complete batch, read again and matched.
        var doneBefore = 0
        var total = 0
        for (name, bytes) in files where verdicts.contains(where: { $0.name == name && $0.verdict.isVerified }) {
            let export: KeyExport
            do {
                export = try KeyFile(zip: bytes, policy: policy).export
            } catch {
                throw .keyFile(name: name, error)
            }
            var toMatch = [DiagnosisKey]()
            var toRevise = [DiagnosisKey]()
            for key in export.keys {
                if results.hasResult(for: key.key.keyData) { toRevise.append(key) } else { toMatch.append(key) }
            }
            statistics.keysWithStoredResult += toRevise.count
            total += toMatch.count
            let counter = ProgressCounter(start: doneBefore)
            let knownTotal = total
            let found: [KeyMatch]
            do {
                let (matches, counts) = try await matcher.match(toMatch, parallelism: parallelism) { done in
                    progress?(counter.add(done), knownTotal)
                }
                found = matches
                statistics.add(counts)
            } catch {
                throw .cancelled
            }
            doneBefore += toMatch.count
            Self.store(found, copies: toMatch, into: &results, now: now, whenMissing: whenMissing, statistics: &statistics)
            for key in toRevise where results.revise(key, reportTypeWhenMissing: whenMissing) { statistics.revisions += 1 }
            // revised_keys relabel what is stored and are never matched (GMS matches `keys` only).
            for key in export.revisedKeys {
                if results.revise(key, reportTypeWhenMissing: whenMissing) {
                    statistics.revisions += 1
                } else if !results.hasResult(for: key.key.keyData) {
                    statistics.revisedKeysWithoutResult += 1
                }
            }
        }
        results.age(today: UTCDay(containing: now))
        let result = Self.score(results, statistics: statistics, files: verdicts, configuration: configuration, now: now)
        let deferred = verdicts.compactMap { incomplete[$0.name] == nil ? nil : $0.name }
        return DetectionRun(result: result, results: results, deferredFiles: deferred)
    }

    /// Stores a file's new matches in the order of the file, so that two copies of one key in a
    /// file store the first and let the second revise it, whatever order the matching tasks
    /// finished in.
    static func store(
        _ found: [KeyMatch], copies keys: [DiagnosisKey], into results: inout ExposureResults, now: UnixTime, whenMissing: ReportType,
        statistics: inout MatchStatistics
    ) {
        guard !found.isEmpty else { return }
        var sightings = [Bytes16: [Sighting]]()
        for match in found { sightings[match.key.key.keyData] = match.sightings }
        for key in keys {
            guard let matched = sightings[key.key.keyData] else { continue }
            if results.insert(KeyMatch(key: key, sightings: matched), at: now) {
                statistics.newResults += 1
            } else if results.revise(key, reportTypeWhenMissing: whenMissing) {
                statistics.revisions += 1
            }
        }
    }

    /// Keys done across the matching tasks of one file.
    final class ProgressCounter: Sendable {
        private let done: Mutex<Int>
        init(start: Int) { done = Mutex(start) }
        func add(_ count: Int) -> Int { done.withLock { $0 += count; return $0 } }
    }
}
