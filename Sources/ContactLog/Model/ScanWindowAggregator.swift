// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// One scan window's reports folded into what the log keeps: one aggregate per RPI (first and last
/// time, report count, RSSI summary after the receiver's correction) and the window's counts. Pure:
/// the scanner feeds it what the radio reports, the replay (`gaenctl tools replay`) what a
/// recording says was heard, so both write the same records from the same sightings.
package struct ScanWindowAggregator: Sendable {
    /// The most distinct RPIs one window keeps. A packed stadium puts a few thousand phones in
    /// range; a radio cycling addresses can put millions in a window. Over the cap the weakest are
    /// dropped (docs/contact-log.md, "The cap of a scan window").
    package static let maximumRPIs = 5_000

    package let start: UnixTime
    /// The end of the receiver's previous scan window, whatever it heard: each aggregate carries it.
    package let previousScanEnd: UnixTime?
    /// Added to each reading (`rssi-correction`).
    package let rssiCorrection: Int
    /// The most distinct RPIs this window keeps.
    package let capacity: Int
    package private(set) var reports: UInt32 = 0
    package private(set) var exposureNotificationReports: UInt32 = 0
    package private(set) var malformed = 0
    /// GAEN reports not kept because the window was full, and RPIs turned away or evicted.
    package private(set) var droppedReports: UInt32 = 0
    package private(set) var droppedRPIs: UInt32 = 0
    private var aggregates: [RollingProximityIdentifier: Kept] = [:]
    /// The kept RPIs as a binary min-heap by `strength`: the root is the first to go.
    private var weakest: [RollingProximityIdentifier] = []

    private struct Kept: Sendable {
        var aggregate: ContactAggregate
        var heapIndex: Int
    }

    package init(start: UnixTime, previousScanEnd: UnixTime?, rssiCorrection: Int, capacity: Int = maximumRPIs) {
        self.start = start
        self.previousScanEnd = previousScanEnd
        self.rssiCorrection = rssiCorrection
        self.capacity = max(1, capacity)
    }

    /// Distinct RPIs kept so far.
    package var keptRPIs: Int { aggregates.count }

    /// A report that is not GAEN (another advertisement, a scan response).
    package mutating func addOther() { reports += 1 }

    /// A frame that claims to be GAEN but is malformed: counted, dropped.
    package mutating func addMalformed() {
        reports += 1
        malformed += 1
    }

    /// A GAEN report of `rpi` at `seen` with the raw `rssi`.
    package mutating func add(rpi: RollingProximityIdentifier, aem: AssociatedEncryptedMetadata, rssi raw: Int8, at seen: UnixTime) {
        reports += 1
        exposureNotificationReports += 1
        let rssi = Self.corrected(raw, by: rssiCorrection)
        if var kept = aggregates[rpi] {
            kept.aggregate.lastSeen = seen
            kept.aggregate.reports &+= 1
            kept.aggregate.rssi.add(rssi)
            aggregates[rpi] = kept
            // Stronger or more often heard: it can only move away from the root.
            siftDown(kept.heapIndex)
            return
        }
        var summary = RSSISummary()
        summary.add(rssi)
        let aggregate = ContactAggregate(
            rpi: rpi, aem: aem, firstSeen: seen, lastSeen: seen, reports: 1, rssi: summary, previousScanEnd: previousScanEnd)
        if aggregates.count >= capacity {
            // Full: the newcomer takes the weakest one's place only if it is stronger.
            let root = weakest[0]
            let victim = aggregates[root]!.aggregate
            droppedRPIs &+= 1
            guard Self.strength(aggregate) > Self.strength(victim) else {
                droppedReports &+= 1
                return
            }
            droppedReports &+= UInt32(victim.reports)
            aggregates[root] = nil
            weakest[0] = rpi
            aggregates[rpi] = Kept(aggregate: aggregate, heapIndex: 0)
            siftDown(0)
            return
        }
        weakest.append(rpi)
        aggregates[rpi] = Kept(aggregate: aggregate, heapIndex: weakest.count - 1)
        siftUp(weakest.count - 1)
    }

    /// The window's record, ending at `end`, and its aggregates in the order they were first heard.
    package func finish(end: UnixTime, monotonicMilliseconds: UInt32) -> (record: ScanWindowRecord, aggregates: [ContactAggregate]) {
        let record = ScanWindowRecord(
            start: start, end: end, reports: reports, exposureNotificationReports: exposureNotificationReports,
            aggregates: UInt32(aggregates.count), previousScanEnd: previousScanEnd, monotonicMilliseconds: monotonicMilliseconds,
            droppedReports: droppedReports, droppedRPIs: droppedRPIs)
        return (record, aggregates.values.map(\.aggregate).sorted { $0.firstSeen < $1.firstSeen })
    }

    /// What decides who stays when the window is full: the strongest reading first (the nearest
    /// phone: what the authority's attenuation buckets weigh), then the most valid readings, then
    /// the most reports. A report without RSSI is weaker than any reading.
    static func strength(_ aggregate: ContactAggregate) -> (Int, UInt16, UInt16) {
        (Int(aggregate.rssi.maximum ?? -128), aggregate.rssi.validReports, aggregate.reports)
    }

    private func strength(at index: Int) -> (Int, UInt16, UInt16) {
        Self.strength(aggregates[weakest[index]]!.aggregate)
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        weakest.swapAt(a, b)
        aggregates[weakest[a]]!.heapIndex = a
        aggregates[weakest[b]]!.heapIndex = b
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard strength(at: child) < strength(at: parent) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < weakest.count else { return }
            var smallest = left
            if left + 1 < weakest.count, strength(at: left + 1) < strength(at: left) { smallest = left + 1 }
            guard strength(at: smallest) < strength(at: parent) else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// A reading with the receiver's correction applied, clamped to −127…126 dBm: 127 means "not
    /// available" (and stays so), so a strong corrected reading must never become it.
    package static func corrected(_ rssi: Int8, by correction: Int) -> Int8 {
        guard rssi != RSSISummary.notAvailable else { return rssi }
        return Int8(min(max(Int(rssi) + correction, -127), 126))
    }
}
