// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
package import Testing

/// The one way tests wait for something. Two forms, for two kinds of things waited on:
/// - `eventually` for another process (a daemon, a server, a peer): it polls, bounded at 30 s of
///   real time. The bound is a failure's limit, not a speed: a working program meets it at once.
/// - `until` for tasks in this process driven by a test clock: it yields, then checks once a
///   millisecond, and is bounded by the suite's time limit. What it waits for is other tasks'
///   progress, never time: the test clocks move only when the test advances them.
/// Either records which wait never ended (and `explain()`, e.g. what the daemon wrote) and throws.

package struct WaitTimedOut: Error {}

/// Polls `condition` (every 50 ms, up to `bound`) until it holds, blocking its thread: for
/// synchronous tests (in an async one the async form below is chosen).
@_disfavoredOverload
package func eventually(
    _ what: String, within bound: Duration = .seconds(30), explain: () -> String = { "" }, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now.advanced(by: bound)
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw timedOut(what, explain(), sourceLocation) }
        usleep(50_000)
    }
}

/// `eventually` for async conditions; it sleeps between polls instead of blocking its thread.
package func eventually(
    _ what: String, within bound: Duration = .seconds(30), explain: () -> String = { "" }, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: bound)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw timedOut(what, explain(), sourceLocation) }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// Waits until `condition` holds: the tasks under test run meanwhile, and time moves only when
/// the test advances its clock. Cancelled (the suite's time limit), it records the wait that never
/// ended and returns.
///
/// It yields first, which is all an idle machine needs; past that it checks once a millisecond.
/// A wait that only yields keeps a thread busy for as long as it lasts, and on a loaded 2-core
/// machine (the sanitizer stage runs every suite at once) a dozen such waits took CPU from the
/// very tasks they waited for.
package func until(_ condition: () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    var checks = 0
    while await !condition() {
        if Task.isCancelled {
            Issue.record("the condition never held", sourceLocation: sourceLocation)
            return
        }
        checks += 1
        if checks < 100 {
            await Task.yield()
        } else {
            // A poll interval, not a time waited for; cancellation ends it at once.
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

private func timedOut(_ what: String, _ explanation: String, _ sourceLocation: SourceLocation) -> WaitTimedOut {
    Issue.record("timed out waiting for \(what)\(explanation.isEmpty ? "" : "\n" + explanation)", sourceLocation: sourceLocation)
    return WaitTimedOut()
}
