// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
import Testing

@Suite struct ConditionLockTests {
    @Test func aWaiterReturnsWhenAChangeSatisfiesItsCondition() async {
        let lock = ConditionLock(0)
        let waiter = Task { await lock.wait { $0 >= 3 } }
        for value in 1...3 {
            // Yield so the waiter may be waiting; the result must not depend on it.
            await Task.yield()
            lock.withLock { $0 = value }
        }
        await waiter.value
        #expect(lock.withLock { $0 } == 3)
    }

    @Test func aConditionThatHoldsReturnsAtOnce() async {
        let lock = ConditionLock("ready")
        await lock.wait { $0 == "ready" }
    }

    @Test func cancellingAWaiterEndsItsWaitAndLeavesOthersWaiting() async {
        let lock = ConditionLock(false)
        let cancelled = Task { await lock.wait { $0 } }
        let other = Task { await lock.wait { $0 } }
        cancelled.cancel()
        await cancelled.value
        #expect(lock.withLock { $0 } == false)
        lock.withLock { $0 = true }
        await other.value
    }

    @Test func aWaitThatIsNotCancellableEndsOnlyByItsCondition() async {
        let lock = ConditionLock(0)
        let ended = ConditionLock(false)
        let waiter = Task {
            await lock.wait(cancellable: false) { $0 == 1 }
            ended.withLock { $0 = true }
        }
        waiter.cancel()
        // Cancelled, it still waits: let it run, then see that it has not ended.
        for _ in 0..<100 { await Task.yield() }
        #expect(ended.withLock { $0 } == false)
        lock.withLock { $0 = 1 }
        await waiter.value
        #expect(ended.withLock { $0 })
    }

    @Test func manyWaitersAndChangesFromManyTasksAllEnd() async {
        let lock = ConditionLock(0)
        await withTaskGroup(of: Void.self) { group in
            for target in 1...50 { group.addTask { await lock.wait { $0 >= target } } }
            for _ in 1...50 { group.addTask { lock.withLock { $0 += 1 } } }
        }
        #expect(lock.withLock { $0 } == 50)
    }
}

@Suite struct ChangesTests {
    @Test func aFollowerHearsNowAndAfterEachSignal() async {
        let changes = Changes()
        var updates = changes.updates().makeAsyncIterator()
        #expect(await updates.next() != nil)
        changes.signal()
        #expect(await updates.next() != nil)
    }

    @Test func aBurstIsOneNotice() async {
        let changes = Changes()
        var updates = changes.updates().makeAsyncIterator()
        _ = await updates.next()
        for _ in 0..<10 { changes.signal() }
        _ = await updates.next()
        // Nothing more is pending: a new signal is what the next notice waits for.
        let next = Task { await updates.next() }
        changes.signal()
        #expect(await next.value != nil)
    }
}
