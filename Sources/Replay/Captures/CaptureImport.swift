// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
import Logging
package import Storage

/// A capture into a contact log, as gaend's scanner would have written what its receiver heard:
/// its reports cut into the scans its host switched on and off (LE Set (Extended) Scan Enable in
/// the capture), or, in a capture without them, where GMS cuts scans (a gap over 25.5 s,
/// `TraceReplay.scanGapMilliseconds`); each window's GAEN sightings folded per RPI by the scanner's
/// own `ScanWindowAggregator`, its other reports counted, its listening time from its first report
/// to its last, and appended by the log's own writer. The RPIs and AEMs are the ones heard, so
/// real key files match against the log (`gaenctl tools match`).
package enum CaptureImport {
    package struct Imported: Sendable, Equatable {
        package var windows = 0
        package var aggregates = 0
        package var reports = 0
        /// Reports that came while the host had its scan switched off (in flight when it switched).
        package var outsideScans = 0

        package init(windows: Int = 0, aggregates: Int = 0, reports: Int = 0, outsideScans: Int = 0) {
            self.windows = windows
            self.aggregates = aggregates
            self.reports = reports
            self.outsideScans = outsideScans
        }
    }

    /// Imports `capture` with `offsetSeconds` added to its times into the log of `data`. The
    /// writer's clock is the capture's last report, as if it wrote at the time: the log keeps the
    /// capture's days (14 of them at most), and a gaend started on it later prunes them by its own
    /// clock as any other days.
    package static func run(
        _ capture: CaptureSightings, offsetSeconds: Int64, rssiCorrection: Int, into data: DataDirectory
    ) async throws -> Imported {
        let events = (capture.heard.map(Event.gaen) + capture.otherReports.map(Event.other)).sorted { $0.time < $1.time }
        let switches = capture.scanSwitches
        guard let last = (events.last?.time).map({ max($0, switches.last?.time ?? $0) }) ?? switches.last?.time else { return Imported() }
        let quiet = Logger(label: "gaend.import", factory: { _ in SwiftLogNoOpLogHandler() })
        let clock = ReplayClock(last.adding(seconds: offsetSeconds))
        let writer = try ContactLogWriter(dataDirectory: data, clock: clock, policy: .kernelDecides, logger: quiet)
        var imported = Imported()
        var scan: ScanWindowAggregator?
        var lastReport: UnixTime?
        var previousEnd: UnixTime?
        func shifted(_ time: UnixTime) -> UnixTime { time.adding(seconds: offsetSeconds) }
        func open(at time: UnixTime) { scan = ScanWindowAggregator(start: time, previousScanEnd: previousEnd, rssiCorrection: rssiCorrection) }
        func close(at end: UnixTime) async throws {
            guard let window = scan else { return }
            let (record, folded) = window.finish(end: end, monotonicMilliseconds: UInt32(clamping: end.milliseconds - window.start.milliseconds))
            imported.aggregates += try await writer.append(window: record, aggregates: folded)
            imported.windows += 1
            previousEnd = end
            scan = nil
        }
        func take(_ event: Event, at time: UnixTime) {
            switch event {
            case .gaen(let heard): scan?.add(rpi: heard.payload.rpi, aem: heard.payload.aem, rssi: heard.rssi, at: time)
            case .other: scan?.addOther()
            }
            imported.reports += 1
        }
        if switches.contains(where: \.on) {
            // The host's own scans: a window from each switch on to the next switch off.
            var next = 0
            for event in events {
                while next < switches.count, switches[next].time <= event.time {
                    let at = shifted(switches[next].time)
                    if switches[next].on { open(at: at) } else { try await close(at: at) }
                    next += 1
                }
                guard scan != nil else {
                    imported.outsideScans += 1
                    continue
                }
                take(event, at: shifted(event.time))
            }
            while next < switches.count {
                let at = shifted(switches[next].time)
                if switches[next].on { open(at: at) } else { try await close(at: at) }
                next += 1
            }
            // A capture that ends while scanning: the window ends at its last report.
            if let window = scan { try await close(at: max(window.start, shifted(events.last?.time ?? last))) }
        } else {
            // No scan commands (a capture of the controller's side only): GMS's cut.
            for event in events {
                let time = shifted(event.time)
                if let previous = lastReport, time.milliseconds - previous.milliseconds > TraceReplay.scanGapMilliseconds {
                    try await close(at: previous)
                }
                if scan == nil { open(at: time) }
                take(event, at: time)
                lastReport = time
            }
            if let lastReport { try await close(at: lastReport) }
        }
        try await writer.sync()
        return imported
    }

    private enum Event {
        case gaen(CaptureSightings.Heard)
        case other(UnixTime)

        var time: UnixTime {
            switch self {
            case .gaen(let heard): heard.time
            case .other(let time): time
            }
        }
    }
}
