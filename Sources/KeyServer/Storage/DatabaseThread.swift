// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// The serial executor of an actor that owns a database connection: a thread of its own, which
/// runs the actor's jobs one at a time.
///
/// Why: SQLite and libpq calls block, a PostgreSQL statement for as long as the server takes (an
/// advisory lock another replica holds, a slow disk). On the cooperative pool, which has one
/// thread per core, two such waits stop every other task of the process: the HTTP handlers, the
/// export timer, and in the tests whatever else runs beside the store. On its own thread a store
/// waits alone.
final class DatabaseThread: SerialExecutor, @unchecked Sendable {
    // @unchecked: the stored variables are read and written under `condition`.
    private let condition = NSCondition()
    private let name: String
    private var jobs: [UnownedJob] = []
    private var started = false
    private var stopping = false

    init(name: String) {
        self.name = name
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // Started by the first job, not in init: an owner whose init throws (a database that
        // cannot be opened) never runs a job nor its deinit, and would leave a thread waiting.
        let start = !started
        started = true
        condition.signal()
        condition.unlock()
        if start {
            // The thread holds the executor until it ends, after `stop()`.
            Thread { [self] in
                // Named from inside, through /proc: on Linux a name set on a Thread before start
                // does not reach the thread, and pthread_setname_np needs _GNU_SOURCE.
                try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                run()
            }.start()
        }
    }

    /// Ends the thread once the jobs already queued have run (the owner is going away).
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
            condition.lock()
        }
    }
}
