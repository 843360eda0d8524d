// SPDX-License-Identifier: GPL-3.0-or-later

import Radio
import ServiceLifecycle
import GaendAPI

/// The beacon's schedule, the same for every back end: scan windows, and rotations between them.
enum BeaconTimeline {
    /// One loop owns the radio's timeline. Controllers refuse LE Set Random Address while scanning
    /// as well as while advertising (Core Vol 4 Part E 7.8.4), so rotations happen between scan
    /// windows; a window is cut short when a rotation falls due, so the rotation timer and the
    /// UTC-midnight key change are kept to the second. Runs until cancelled or a radio error.
    static func run<C: Clock>(advertiser: Advertiser, scanner: Scanner, settings: RadioSettings, clock monotonic: C) async throws
    where C.Duration == Duration {
        var rotationDue = monotonic.now.advanced(by: .seconds(await advertiser.nextRotationDelay()))
        func rotateIfDue() async throws {
            guard monotonic.now >= rotationDue else { return }
            try await advertiser.rotate()
            rotationDue = monotonic.now.advanced(by: .seconds(await advertiser.nextRotationDelay()))
        }
        func sleep(atMost duration: Duration) async throws {
            let until = min(monotonic.now.advanced(by: duration), rotationDue)
            if until > monotonic.now { try await monotonic.sleep(until: until, tolerance: nil) }
        }
        while true {
            try await rotateIfDue()
            try await scanner.beginWindow()
            try await sleep(atMost: .milliseconds(Int(settings.scanWindowSeconds * 1000)))
            try await scanner.endWindow()
            try await rotateIfDue()
            if let interval = settings.scanInterval {
                try await sleep(atMost: .seconds(Int.random(in: interval)))
            }
        }
    }

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
