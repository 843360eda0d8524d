// SPDX-License-Identifier: GPL-3.0-or-later

import Executors
import Glibc
import Synchronization
import Testing

/// gaend's own executor: jobs on its threads, a thread that blocks never holding back another job,
/// a delayed job not before its deadline.
@Suite struct WorkerPoolTests {
    static func threadName() -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        let file = open("/proc/thread-self/comm", O_RDONLY)
        defer { close(file) }
        let count = read(file, &bytes, bytes.count)
        // The kernel ends the name with one newline when it reads it back; a name set with one
        // of its own would read back with two.
        let text = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    @Test func jobsRunOnThePoolsThreads() async {
        let pool = WorkerPool()
        let name = await withTaskExecutorPreference(pool) { Self.threadName() }
        #expect(name == "gaend-worker")
    }

    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    @Test func aJobThatBlocksItsThreadHoldsBackNoOther() async {
        let pool = WorkerPool()
        let released = Flag()
        await withTaskExecutorPreference(pool) {
            await withTaskGroup(of: Void.self) { group in
                // Blocks its thread until the other job has run: with one thread this never ends.
                group.addTask {
                    while !released.isSet { usleep(1000) }
                }
                group.addTask { released.set() }
            }
        }
        #expect(released.isSet)
    }

    @Test func aSleepEndsNoEarlierThanItsDeadline() async throws {
        // The executor's timer is what is tested: it sleeps for real, 20 ms.
        let pool = WorkerPool()
        let clock = ContinuousClock()
        let start = clock.now
        try await withTaskExecutorPreference(pool) {
            try await Task.sleep(for: .milliseconds(20))
            #expect(Self.threadName() == "gaend-worker")
        }
        #expect(start.duration(to: clock.now) >= .milliseconds(20))
    }
}
