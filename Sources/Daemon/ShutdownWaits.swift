// SPDX-License-Identifier: GPL-3.0-or-later

import ServiceLifecycle

/// The waits of the radio services that shutdown or the owner's switch must be able to cut short.
enum ShutdownWaits {
    /// Sleeps, or returns `true` early when shutdown is requested.
    static func sleepOrShutdown(_ duration: Duration, clock: any Clock<Duration>) async -> Bool {
        // Cancelled (the group's shutdown limit passed): as good as shutdown, and no sleep would
        // wait any more.
        if Task.isCancelled { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await clock.sleep(for: duration)
                return false
            }
            group.addTask {
                try? await gracefulShutdown()
                return true
            }
            let first = await group.next() ?? true
            group.cancelAll()
            return first
        }
    }

    /// Waits until Exposure Notification is enabled, or returns `true` when shutdown comes first.
    static func waitForEnabledOrShutdown(_ gate: EnablementGate) async -> Bool {
        if Task.isCancelled { return true }
        if gate.isEnabled { return false }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await gate.wait(for: true)
                return false
            }
            group.addTask {
                try? await gracefulShutdown()
                return true
            }
            let first = await group.next() ?? true
            group.cancelAll()
            return first
        }
    }
}
