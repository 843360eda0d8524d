// SPDX-License-Identifier: GPL-3.0-or-later

@_spi(ExperimentalScheduling) import _Concurrency
import Glibc
import SystemCalls

/// gaend's default executor: jobs run on threads of its own that sleep in the kernel until there
/// is work, and a delayed job (`Task.sleep`, a clock's sleep) wakes one thread at its deadline and
/// no sooner. libdispatch's pool, the default on Linux, starts a workqueue monitor with its first
/// worker thread that wakes the process every second for the rest of its life
/// (swift-corelibs-libdispatch `src/event/workqueue.c`); a wearable's battery pays for each.
///
/// Threads grow with the work: a job that finds no idle thread gets a new one (code that blocks a
/// thread, as some waits do, never holds back another job); a thread idle for `idleLifetime` ends,
/// except the last.
package final class WorkerPool: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    // @unchecked: every stored property below is read and written under `mutex`.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var ready: [UnownedJob] = []
    /// Delayed jobs, earliest deadline (CLOCK_MONOTONIC) first.
    private var delayed: [(deadline: Duration, job: UnownedJob)] = []
    private var threads = 0
    private var idle = 0
    /// Whether an idle thread is waiting for the earliest deadline (the others wait for work).
    private var timekeeping = false
    private let idleLifetime: Duration
    private let maximumThreads: Int

    package init(idleLifetime: Duration = .seconds(10), maximumThreads: Int = 64) {
        self.idleLifetime = idleLifetime
        self.maximumThreads = maximumThreads
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(&mutex)
        ready.append(job)
        let spawn = idle == 0 && threads < maximumThreads
        if spawn { threads += 1 }
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
        if spawn { startThread() }
    }

    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        // The clocks gaend sleeps on (continuous, suspending) count in Duration; on Linux neither
        // advances while the system is suspended differently enough to matter to a beacon.
        let wait = (delay as? Duration) ?? .zero
        let job = UnownedJob(job)
        pthread_mutex_lock(&mutex)
        // Kept in deadline order here, once, rather than searched by every thread on every job.
        let deadline = Self.now() + max(wait, .zero)
        delayed.insert((deadline, job), at: delayed.firstIndex { $0.deadline > deadline } ?? delayed.endIndex)
        let spawn = idle == 0 && threads < maximumThreads
        if spawn { threads += 1 }
        // The timekeeper may be waiting for a later deadline: all wake and one takes the role again.
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
        if spawn { startThread() }
    }

    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        enqueue(job, after: clock.now.duration(to: instant), tolerance: tolerance, clock: clock)
    }

    package var asSchedulingExecutor: (any SchedulingExecutor)? { self }

    static func now() -> Duration {
        var time = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    private func startThread() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                let pool = Unmanaged<WorkerPool>.fromOpaque(context!).takeRetainedValue()
                pool.work()
                return nil
            }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<WorkerPool>.fromOpaque(context).release()
            pthread_mutex_lock(&mutex)
            threads -= 1
            pthread_mutex_unlock(&mutex)
        }
    }

    private func work() {
        SystemCall.nameThisThread("gaend-worker")
        pthread_mutex_lock(&mutex)
        while true {
            // Due delayed jobs become ready, earliest first.
            let now = Self.now()
            while let first = delayed.first, first.deadline <= now { ready.append(delayed.removeFirst().job) }
            if !ready.isEmpty {
                let job = ready.removeFirst()
                pthread_mutex_unlock(&mutex)
                job.runSynchronously(on: asUnownedTaskExecutor())
                pthread_mutex_lock(&mutex)
                continue
            }
            idle += 1
            if let next = delayed.first?.deadline, !timekeeping {
                // This thread keeps time: it sleeps until the earliest deadline, the others until work.
                timekeeping = true
                var deadline = Self.deadline(next)
                pthread_cond_timedwait(&condition, &mutex, &deadline)
                timekeeping = false
                idle -= 1
                continue
            }
            if threads > 1 {
                var deadline = Self.deadline(now + idleLifetime)
                let result = pthread_cond_timedwait(&condition, &mutex, &deadline)
                idle -= 1
                if result == ETIMEDOUT, ready.isEmpty, threads > 1, delayed.isEmpty || timekeeping {
                    threads -= 1
                    pthread_mutex_unlock(&mutex)
                    return
                }
                continue
            }
            pthread_cond_wait(&condition, &mutex)
            idle -= 1
        }
    }

    private static func deadline(_ time: Duration) -> Glibc.timespec {
        let (seconds, attoseconds) = time.components
        return Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    }
}
