// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation
package import Testing

/// A task executor whose threads grow with the work: a job that finds no idle thread gets a new
/// one, and a thread idle for a second ends.
///
/// Why the tests need it: the cooperative pool has one thread per core, two on CI. Tests that
/// wait on purpose (a tool to exit, a fixture's ready line, a condition polled with usleep) hold
/// a pool thread for as long as they wait, and while two of them do, every other test in the run
/// stands still with its time limit running. One such wait (the key-server load run, 35 s) made
/// tests that take 0.2 s alone report 38 s; on a slower machine that runs 1-minute limits out. The
/// pool is left to the code under test: its own tasks (D-Bus answers among them) run there.
package final class ElasticExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every stored property below is read and written under `condition`.
    private let condition = NSCondition()
    private var pending: [UnownedJob] = []
    private var idle = 0
    private let idleLifetime: TimeInterval

    package init(idleLifetime: TimeInterval = 1) {
        self.idleLifetime = idleLifetime
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        pending.append(job)
        // More jobs waiting than threads waiting for them: one more thread, so no job ever waits
        // behind another that blocks.
        let spawn = pending.count > idle
        condition.signal()
        condition.unlock()
        if spawn { startThread() }
    }

    private func startThread() {
        let thread = Thread { [self] in
            // Named from inside, through /proc: on Linux a name set before start does not reach it.
            try? "test-elastic".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            work()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func work() {
        condition.lock()
        while true {
            if !pending.isEmpty {
                let job = pending.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
                condition.lock()
                continue
            }
            idle += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
            idle -= 1
            if !woken && pending.isEmpty {
                condition.unlock()
                return
            }
        }
    }
}

/// Runs a suite (or a test) on an `ElasticExecutor` of its own, so that what it waits for
/// synchronously holds none of the cooperative pool's threads. Every suite has it but the
/// microsecond ones of ENCoreTests and ENCryptoTests (whose targets do not link the support module).
package struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { false }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ElasticExecutor()) { try await function() }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// See `OwnThreadsTrait`.
    package static var ownThreads: Self { Self() }
}

/// Starts the code under test in an unstructured task on threads of its own. `Task {}` inherits no
/// executor preference (SE-0417 hands it to child tasks only), so a service a test starts that way
/// runs on the cooperative pool, whose two threads every suite's tasks share: under
/// AddressSanitizer, with the whole run on 2 cores, a service that needs milliseconds waited there
/// for over a minute (HCIDriverTests, then RadioServiceTests, CI stop 23).
package func taskOnOwnThreads<Success: Sendable>(_ operation: sending @escaping () async throws -> Success) -> Task<Success, any Error> {
    Task(executorPreference: ElasticExecutor(), operation: operation)
}
