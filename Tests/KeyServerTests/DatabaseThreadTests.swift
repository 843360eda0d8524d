// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
@testable import KeyServer
import Testing

/// The database actors' executor: jobs run on its own thread, which starts with the first job and
/// ends when its owner goes away, so neither a failed open nor a dropped store leaves one behind.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct DatabaseThreadTests {
    /// An actor on a `DatabaseThread`, as `KeyStore` and `Verifier` are.
    actor Owner {
        let thread: DatabaseThread
        nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }
        init(_ name: String) { thread = DatabaseThread(name: name) }
        deinit { thread.stop() }
        func threadName() -> String? {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }
    }

    /// Threads of this process with `name` (the kernel keeps 15 bytes of it).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name
        }.count
    }

    @Test func theThreadStartsWithTheFirstJobAndEndsWithItsOwner() async throws {
        let name = "dbt-\(UInt32.random(in: 0...UInt32.max))"
        var owner: Owner? = Owner(name)
        #expect(Self.threads(named: name) == 0)
        let first = await owner?.threadName()
        let second = await owner?.threadName()
        #expect(first == name)
        #expect(second == name)
        #expect(Self.threads(named: name) == 1)
        owner = nil
        // A bound, not a speed: the thread ends as soon as it sees the stop.
        for _ in 0..<3000 where Self.threads(named: name) > 0 { usleep(10_000) }
        #expect(Self.threads(named: name) == 0)
    }
}
