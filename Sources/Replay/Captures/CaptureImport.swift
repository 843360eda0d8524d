// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
import Logging
package import Storage

/// A capture into a contact log, as gaend's scanner would have written what its receiver heard:
/// its reports cut into scan windows where GMS cuts them (a gap over 25.5 s,
/// `TraceReplay.scanGapMilliseconds`), each window's GAEN sightings folded per RPI by the scanner's
/// own `ScanWindowAggregator`, its other reports counted, its listening time from its first report
/// to its last, and appended by the log's own writer. The RPIs and AEMs are the ones heard, so
/// real key files match against the log (`gaenctl tools match`).
package enum CaptureImport {
    package struct Imported: Sendable, Equatable {
        package var windows = 0
        package var aggregates = 0
        package var reports = 0

        package init(windows: Int = 0, aggregates: Int = 0, reports: Int = 0) {
            self.windows = windows
            self.aggregates = aggregates
            self.reports = reports
        }
    }

    /// Imports `capture` with `offsetSeconds` added to its times into the log of `data`. The
    /// writer's clock is the capture's last report, as if it wrote at the time: the log keeps the
    /// capture's days (14 of them at most), and a gaend started on it later prunes them by its own
    /// clock as any other days.
    package static func run(
        _ capture: CaptureSightings, offsetSeconds: Int64, rssiCorrection: Int, into data: DataDirectory
    ) async throws -> Imported {
        enum Event {
            case gaen(CaptureSightings.Heard)
            case other(UnixTime)
            var time: UnixTime {
                switch self {
                case .gaen(let heard): heard.time
                case .other(let time): time
                }
            }
        }
        let events = (capture.heard.map(Event.gaen) + capture.otherReports.map(Event.other)).sorted { $0.time < $1.time }
        var imported = Imported()
        guard let first = events.first else { return imported }
        let quiet = Logger(label: "gaend.import", factory: { _ in SwiftLogNoOpLogHandler() })
        let clock = ReplayClock(events[events.count - 1].time.adding(seconds: offsetSeconds))
        let writer = try ContactLogWriter(dataDirectory: data, clock: clock, policy: .kernelDecides, logger: quiet)
        func shifted(_ time: UnixTime) -> UnixTime { time.adding(seconds: offsetSeconds) }
        var scan = ScanWindowAggregator(start: shifted(first.time), previousScanEnd: nil, rssiCorrection: rssiCorrection)
        var last = shifted(first.time)
        func close() async throws {
            let (record, folded) = scan.finish(end: last, monotonicMilliseconds: UInt32(clamping: last.milliseconds - scan.start.milliseconds))
            imported.aggregates += try await writer.append(window: record, aggregates: folded)
            imported.windows += 1
        }
        for event in events {
            let time = shifted(event.time)
            if time.milliseconds - last.milliseconds > TraceReplay.scanGapMilliseconds {
                try await close()
                scan = ScanWindowAggregator(start: time, previousScanEnd: last, rssiCorrection: rssiCorrection)
            }
            switch event {
            case .gaen(let heard): scan.add(rpi: heard.payload.rpi, aem: heard.payload.aem, rssi: heard.rssi, at: time)
            case .other: scan.addOther()
            }
            imported.reports += 1
            last = time
        }
        try await close()
        try await writer.sync()
        return imported
    }
}
