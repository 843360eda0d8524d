// SPDX-License-Identifier: GPL-3.0-or-later

@_spi(ExperimentalCustomExecutors) import _Concurrency
import Glibc

/// The main actor's executor: the main thread runs its jobs and otherwise sleeps until one comes.
package final class MainLoop: MainExecutor, @unchecked Sendable {
    // @unchecked: every stored property below is read and written under `mutex`.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var ready: [UnownedJob] = []
    private var stopped = false

    package init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(&mutex)
        ready.append(job)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    package func run() throws { try runUntil { false } }

    package func runUntil(_ condition: () -> Bool) throws {
        pthread_mutex_lock(&mutex)
        while !stopped && !condition() {
            guard !ready.isEmpty else {
                pthread_cond_wait(&self.condition, &mutex)
                continue
            }
            let job = ready.removeFirst()
            pthread_mutex_unlock(&mutex)
            job.runSynchronously(on: asUnownedSerialExecutor())
            pthread_mutex_lock(&mutex)
        }
        pthread_mutex_unlock(&mutex)
    }

    package func stop() {
        pthread_mutex_lock(&mutex)
        stopped = true
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }
}
