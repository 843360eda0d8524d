// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
package import Logging
package import GaendConfiguration

/// Listens in scan windows, aggregates what it hears per RPI, and appends each window to the
/// contact log when it ends. Passive scanning, duplicates not filtered, reports from both report
/// events; a frame is GAEN when it carries 0xFD6F service data (Android frames without Flags and
/// ADV_SCAN_IND included, and scan responses: `AdvertisingReport.content`); everything else is
/// counted and dropped.
package actor Scanner {
    private let radio: any BeaconRadio
    private let log: ContactLogWriter
    private let clock: any WallClock
    /// Measures windows and report times within them (monotonic).
    private let monotonic: any Clock<Duration>
    private let settings: RadioSettings
    private let logger: Logger
    private let untrusted: UntrustedWindows?
    /// The previous window's end, and whether it was on the boot clock (held).
    private var previousScan: (end: UnixTime, held: Bool)?
    private var window: WindowState?
    package private(set) var windowsWritten = 0
    /// Windows heard on an untrusted clock with nowhere to hold them: not kept.
    package private(set) var windowsDropped = 0

    struct WindowState {
        var aggregator: ScanWindowAggregator
        var stopwatch: Stopwatch
        /// Timed on the boot clock, for the held sightings, because the wall clock was not trusted.
        var held: Bool
    }

    package init(
        radio: any BeaconRadio, log: ContactLogWriter, clock: any WallClock, monotonic: any Clock<Duration> = ContinuousClock(), settings: RadioSettings,
        untrusted: UntrustedWindows? = nil, logger: Logger = Logger(label: "gaend.scanner")
    ) {
        self.untrusted = untrusted
        self.radio = radio
        self.log = log
        self.clock = clock
        self.monotonic = monotonic
        self.settings = settings
        self.logger = logger
    }

    /// Starts a window: passive scan, no duplicate filter. On a wall clock that cannot be trusted
    /// the window is timed on the boot clock and held until it can be re-timed.
    package func beginWindow() async throws {
        let held = clock.distrust != nil
        let start = held ? UnixTime(milliseconds: untrusted?.bootMilliseconds() ?? 0) : clock.now()
        // The previous window's end only on the same clock.
        let previousScanEnd = previousScan.flatMap { $0.held == held ? $0.end : nil }
        // The window opens before the enable: a controller may report at once, before the enable's
        // completion reaches this actor (btvirt reports only then; the VM test lost them all).
        window = WindowState(
            aggregator: ScanWindowAggregator(start: start, previousScanEnd: previousScanEnd, rssiCorrection: settings.rssiCorrection),
            stopwatch: Stopwatch(monotonic), held: held)
        do {
            try await radio.startScanning()
        } catch {
            window = nil
            throw error
        }
    }

    /// Takes one report into the open window; false when no window is open to take it.
    @discardableResult
    package func handle(_ report: RadioReport) -> Bool {
        guard var current = window else { return false }
        defer { window = current }
        switch report {
        case .sighting(let sighting):
            // Wall time of the report: the window's start plus monotonic time, so a clock step
            // inside a window cannot put a report before its window.
            let seen = current.aggregator.start.adding(milliseconds: current.stopwatch.elapsed)
            current.aggregator.add(rpi: sighting.payload.rpi, aem: sighting.payload.aem, rssi: sighting.rssi, at: seen)
        case .other: current.aggregator.addOther()
        case .malformed: current.aggregator.addMalformed()
        }
        return true
    }

    /// Ends the window: scanning off, the aggregates and the window record appended (and synced, by
    /// the log's policy). What was heard is appended even when the controller refuses to stop (or
    /// is gone: `stopScanning: false`); its error is thrown after the log has the window.
    @discardableResult
    package func endWindow(stopScanning: Bool = true) async throws -> Int {
        guard window != nil else { return 0 }
        var controllerError: (any Error)?
        // Scanning stops while the window is still open: what the radio reported until it stopped
        // (and the back end has delivered, see `Radio.stopScanning`) belongs to this window.
        if stopScanning {
            do {
                try await radio.stopScanning()
            } catch {
                controllerError = error
            }
        }
        guard let current = window else { return 0 }
        window = nil
        let elapsed = current.stopwatch.elapsed
        let end = current.aggregator.start.adding(milliseconds: elapsed)
        let (record, aggregates) = current.aggregator.finish(
            end: end, monotonicMilliseconds: UInt32(clamping: elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000))
        var written = 0
        if !current.held {
            written = try await log.append(window: record, aggregates: aggregates)
            windowsWritten += 1
        } else if let untrusted {
            try await untrusted.held.hold(window: record, aggregates: aggregates)
            // Trusted while the window was open: it (and anything still held) is filed now, not
            // left for the next change of trust.
            if clock.distrust == nil {
                try await untrusted.held.release(adding: clock.now().milliseconds - untrusted.bootMilliseconds(), into: log)
            }
        } else {
            windowsDropped += 1
            logger.debug("a window heard on an untrusted clock is not kept", metadata: ["aggregates": "\(aggregates.count)"])
        }
        previousScan = (end, current.held)
        if record.droppedRPIs > 0 {
            // One line a flooded window, whatever the flood's rate (the counts are in the log too).
            logger.warning(
                "scan window over its cap of distinct RPIs: the weakest dropped",
                metadata: [
                    "cap": "\(current.aggregator.capacity)", "rpis.dropped": "\(record.droppedRPIs)",
                    "reports.dropped": "\(record.droppedReports)", "reports": "\(record.exposureNotificationReports)",
                ])
        }
        if current.aggregator.malformed > 0 {
            logger.debug("malformed GAEN frames dropped", metadata: ["frames": "\(current.aggregator.malformed)"])
        }
        if let controllerError { throw controllerError }
        return written
    }
}

/// Where windows heard on an untrusted wall clock go: held on the boot clock.
package struct UntrustedWindows: Sendable {
    package let held: HeldSightings
    /// The boot clock in milliseconds (CLOCK_BOOTTIME; a test's).
    package let bootMilliseconds: @Sendable () -> Int64

    package init(held: HeldSightings, bootMilliseconds: @escaping @Sendable () -> Int64) {
        self.held = held
        self.bootMilliseconds = bootMilliseconds
    }
}

extension UnixTime {
    func adding(milliseconds duration: Duration) -> UnixTime {
        UnixTime(milliseconds: milliseconds + duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
