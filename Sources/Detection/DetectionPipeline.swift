// SPDX-License-Identifier: GPL-3.0-or-later

public import ContactLog
public import ENCore
public import KeyFiles
import Synchronization

/// What one detection run produced. Windows carry no key or identifier, so results may be kept.
public struct DetectionResult: Sendable {
    /// Shuffled, as the framework returns them.
    public var windows: [ExposureWindow]
    public var dailySummaries: [DailySummary]
    public var v1Summary: V1Summary?
    public var v1Exposures: [V1ExposureInfo]
    public var perDay: [PerDayResult]
    public var statistics: MatchStatistics
    /// Each file with its verdict; only verified files were matched.
    public var files: [(name: String, verdict: Verdict, keys: Int)]
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

/// One detection pass, offline: key files in, windows and scores out. The worker adds downloading,
/// budgets and persistence around it; `gaenctl tools match` runs it as it is.
///
/// Files are handled one at a time, so only one file's keys are in memory; a file that does not
/// verify is not matched and is reported with its verdict.
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
        files: [(name: String, bytes: [UInt8])], configuration: ExposureConfiguration, today: UTCDay,
        progress: (@Sendable (_ keysDone: Int, _ keysTotal: Int) -> Void)? = nil
    ) async throws(DetectionError) -> DetectionResult {
        let index: MatchingIndex
        do {
            index = try MatchingIndex(reader: reader)
        } catch {
            throw .contactLog(error)
        }
        let matcher = Matcher(index: index)
        var matches = [KeyMatch]()
        var statistics = MatchStatistics()
        var verdicts = [(name: String, verdict: Verdict, keys: Int)]()
        // The total grows as files are read: only one file's keys are known (and held) at a time.
        var doneBefore = 0
        var total = 0
        for (name, bytes) in files {
            let file: KeyFile
            do {
                file = try KeyFile(zip: bytes, policy: policy)
            } catch {
                verdicts.append((name, .invalid("\(error)"), 0))
                continue
            }
            verdicts.append((name, file.verdict, file.export.keys.count))
            guard file.verdict.isVerified else { continue }
            let keys = file.export.keys + file.export.revisedKeys
            total += keys.count
            let counter = ProgressCounter(start: doneBefore)
            let knownTotal = total
            do {
                let (found, counts) = try await matcher.match(keys, parallelism: parallelism) { done in
                    progress?(counter.add(done), knownTotal)
                }
                doneBefore += keys.count
                matches += found
                statistics.add(counts)
            } catch {
                throw .cancelled
            }
        }
        return Self.score(matches, statistics: statistics, files: verdicts, configuration: configuration, today: today)
    }

    /// Keys done across the matching tasks of one file.
    final class ProgressCounter: Sendable {
        private let done: Mutex<Int>
        init(start: Int) { done = Mutex(start) }
        func add(_ count: Int) -> Int { done.withLock { $0 += count; return $0 } }
    }

    /// Windows and every configured scoring form for a set of matches.
    public static func score(
        _ matches: [KeyMatch], statistics: MatchStatistics, files: [(name: String, verdict: Verdict, keys: Int)],
        configuration: ExposureConfiguration, today: UTCDay, windows storedWindows: [ExposureWindow]? = nil
    ) -> DetectionResult {
        let v2 = configuration.v2 ?? V2Configuration()
        var windows = storedWindows ?? matches.flatMap { WindowBuilder.windows(for: $0, configuration: v2) }
        windows.shuffle()
        var v1Summary: V1Summary?
        var v1Exposures = [V1ExposureInfo]()
        if let v1 = configuration.v1 {
            let perKey = matches.map { (key: $0.key, infos: V1Scorer.exposures(for: $0, configuration: v1, today: today)) }
            v1Exposures = perKey.flatMap(\.infos)
            v1Summary = V1Scorer.summary(perKey, today: today)
        }
        return DetectionResult(
            windows: windows,
            dailySummaries: configuration.v2 != nil || configuration.v1 == nil ? DailySummaryScorer.summaries(windows, configuration: v2, today: today) : [],
            v1Summary: v1Summary, v1Exposures: v1Exposures,
            perDay: configuration.perDay.map { PerDayCheck.results(windows, configuration: $0) } ?? [],
            statistics: statistics, files: files)
    }
}
