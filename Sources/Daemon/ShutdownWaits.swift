// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ServiceLifecycle

/// The waits of the radio services that shutdown must cut short, on swift-service-lifecycle's
/// `cancelWhenGracefulShutdown` rather than a race of our own.
enum ShutdownWaits {
    /// Sleeps on `clock`, or returns `true` early when shutdown is requested.
    static func sleepOrShutdown(_ duration: Duration, clock: any Clock<Duration>) async -> Bool {
        await untilShutdown { try? await clock.sleep(for: duration) }
    }

    /// `wait`, cancelled by graceful shutdown; `true` when shutdown (or the task's cancellation,
    /// which as good as shutdown: no wait would wait any more) came first.
    private static func untilShutdown(_ wait: @escaping @Sendable () async -> Void) async -> Bool {
        if Task.isCancelled { return true }
        await cancelWhenGracefulShutdown(wait)
        return Task.isShuttingDownGracefully || Task.isCancelled
    }
}
