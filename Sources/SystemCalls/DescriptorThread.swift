// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Synchronization

/// What a `DescriptorThread` runs: its owner's reading, on the thread, one wait at a time.
package protocol DescriptorWork: AnyObject {
    /// Runs first, on `thread`; false ends it at once (`finish` still runs).
    func start(on thread: DescriptorThread) -> Bool
    /// What to wait for next: descriptors and their events, and how long (-1: no limit).
    func nextWait() -> DescriptorThread.Wait
    /// The wait ended: what each descriptor of `nextWait` has, in order (all empty when only woken
    /// or timed out). False ends the thread.
    func handle(_ turn: DescriptorThread.Turn) -> Bool
    /// Runs last, once, on the thread: the owner's end (a stream finished, a descriptor closed).
    func finish()
}

extension DescriptorWork {
    package func start(on thread: DescriptorThread) -> Bool { true }
}

/// The one bridge from descriptors to async code (issue 37): a named thread of its own waits in
/// poll(2) on what its work names and on a wake channel, and gives the work each turn; the work
/// reads and hands what it read to a stream or a continuation. `poke()` wakes the wait (new work
/// queued for the thread); `stop()` ends it at its next wake, and the work's `finish` runs last.
/// HCI's transport, the exposure hook's output and end, the clock's timerfd and each D-Bus
/// connection's pump are each one of these: one reader per descriptor, ended the same way.
package final class DescriptorThread: Sendable {
    package struct Wait {
        package var descriptors: [(fd: Int32, events: PollEvents)]
        package var milliseconds: Int32

        package init(_ descriptors: [(fd: Int32, events: PollEvents)], milliseconds: Int32 = -1) {
            self.descriptors = descriptors
            self.milliseconds = milliseconds
        }
    }

    package struct Turn {
        /// What each descriptor of the wait has.
        package let events: [PollEvents]
        /// `poke()` (or `stop()`) woke the wait.
        package let woken: Bool
        package let thread: DescriptorThread
    }

    private let wake: WakeChannel
    private let stopping = Atomic<Bool>(false)
    private let name: String

    /// Starts a thread called `name` running `work`. Throws when no wake channel or thread can be made
    /// (the work's `finish` is then not run: nothing started).
    package init(name: String, work: some DescriptorWork) throws(Errno) {
        wake = try WakeChannel()
        self.name = name
        let start = Unmanaged.passRetained(Start(thread: self, work: work)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                start.thread.run(start.work)
                return nil
            }, start)
        guard created == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw Errno(created)
        }
        pthread_detach(thread)
    }

    /// What the new thread is handed: the thread object and its work, kept until it ends.
    private final class Start {
        let thread: DescriptorThread
        let work: any DescriptorWork
        init(thread: DescriptorThread, work: any DescriptorWork) {
            self.thread = thread
            self.work = work
        }
    }

    /// Wakes the wait: the work's `handle` gets a turn with `woken` set.
    package func poke() { wake.wake() }

    /// Ends the thread at its next wake (now, if it waits); the work's `finish` runs last.
    package func stop() {
        stopping.store(true, ordering: .releasing)
        wake.wake()
    }

    package var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// For a work that must wait inside a turn (for room in a full stream): waits up to
    /// `milliseconds` for `stop()`; true when stopping. A `poke` meanwhile ends the wait early.
    package func waitForStop(milliseconds: Int32) -> Bool {
        if isStopping { return true }
        _ = try? SystemCall.poll([(wake.descriptor, .readable)], milliseconds: milliseconds)
        return isStopping
    }

    private func run(_ work: any DescriptorWork) {
        SystemCall.nameThisThread(name)
        defer { work.finish() }
        guard work.start(on: self) else { return }
        while !isStopping {
            let wait = work.nextWait()
            let ready: [PollEvents]
            do {
                ready = try SystemCall.poll(wait.descriptors + [(wake.descriptor, .readable)], milliseconds: wait.milliseconds)
            } catch  where error == .interrupted {
                continue
            } catch {
                return
            }
            let woken = !ready[ready.count - 1].isEmpty
            if woken { wake.drain() }
            if isStopping { return }
            guard work.handle(Turn(events: Array(ready.dropLast()), woken: woken, thread: self)) else { return }
        }
    }
}
