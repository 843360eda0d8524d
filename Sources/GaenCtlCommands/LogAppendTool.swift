// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import ENCore
import ENCrypto
import Storage
import SystemCalls

/// `gaenctl tools log append`: synthetic aggregates through the real writer and durability policy,
/// for tests, benchmarks and crash tests. After every sync it prints `synced N`, N being the
/// aggregates durable so far, unbuffered, so a parent process knows what must survive a kill.
struct LogAppendTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append",
        abstract: "Append synthetic aggregates through the real writer (for tests and benchmarks).",
        discussion: """
            Windows of --per-window aggregates are spread evenly over the last --days UTC days (today \
            by the system clock). The same --seed always gives the same records. With --tek every \
            window holds one sighting of that key instead (its RPI for the window's interval, its AEM \
            saying 0 dBm, heard at -55 dBm): a key file holding the key then makes an exposure, to \
            rehearse a detection where no radio reports an RSSI.
            """)

    @OptionGroup var options: LogToolOptions

    @Option(help: "How many aggregates to append.")
    var aggregates: Int

    @Option(help: "Spread them over this many UTC days, ending today (1...14).")
    var days = 1

    @Option(help: "Distinct RPIs to draw from.")
    var distinctRpis = 100_000

    @Option(help: "Aggregates per scan window (default 1000; 1 with --tek).")
    var perWindow: Int?

    @Option(help: "Sightings of this Temporary Exposure Key (32 hex digits) instead of random RPIs.")
    var tek: String?

    @Option(help: "The last UTC day of the data, YYYY-MM-DD (default: today by the system clock).")
    var lastDay: String?

    @Option(help: "Seed of the synthetic data.")
    var seed: UInt64 = 1

    @Option(help: "Sync every N windows (1 = every window, the daemon's default; 0 = never).")
    var syncEvery = 1

    func run() async throws {
        let key = try tek.map { try ArgumentParsing.bytes16($0, argument: "--tek") }
        if key != nil, let perWindow, perWindow != 1 {
            throw UsageError("--per-window", "\(perWindow): with --tek each window holds one sighting")
        }
        let perWindow = self.perWindow ?? (key == nil ? 1000 : 1)
        guard aggregates > 0 else { throw UsageError("--aggregates", "\(aggregates) must be positive") }
        guard (1...14).contains(days) else { throw UsageError("--days", "\(days) is outside 1...14") }
        guard perWindow > 0 else { throw UsageError("--per-window", "\(perWindow) must be positive") }
        guard distinctRpis >= perWindow else {
            throw UsageError("--distinct-rpis", "\(distinctRpis) is fewer than --per-window \(perWindow)")
        }
        guard syncEvery >= 0 else { throw UsageError("--sync-every", "\(syncEvery) must not be negative") }
        let clock = SystemWallClock()
        let lastDay = try parseDay(self.lastDay, argument: "--last-day") ?? UTCDay(containing: clock.now())
        // Synthetic sightings never go to the daemon's own log by default: the folder is named.
        guard let path = options.dataDir else { throw UsageError("--data-dir", "append writes synthetic sightings: name the folder") }
        let data = DataDirectory(path: path)
        let writer: ContactLogWriter
        do {
            writer = try ContactLogWriter(
                dataDirectory: data, clock: clock, policy: syncEvery == 0 ? .kernelDecides : .everyWindows(syncEvery))
        } catch {
            throw logOperationError(error)
        }
        let synthetic = SyntheticContacts(
            seed: seed, distinctRPIs: distinctRpis, aggregatesPerWindow: perWindow, days: days,
            lastDay: lastDay, totalAggregates: aggregates)
        let sightings = try key.map { try KeySightings(tek: $0) }
        var reported = 0
        do {
            for index in 0..<synthetic.windowCount {
                let (window, records) = synthetic.window(index)
                try await writer.append(window: window, aggregates: sightings.map { $0.replacing(records) } ?? records)
                let synced = await writer.syncedAggregates
                if synced != reported {
                    reported = synced
                    GaenCtl.writeLineNow("synced \(synced)")
                }
            }
            try await writer.sync()
        } catch {
            throw logOperationError(error)
        }
        let total = await writer.appendedAggregates
        if total != reported { GaenCtl.writeLineNow("synced \(total)") }
        let refused = await writer.refusedRecords
        if refused > 0 { GaenCtl.writeError("gaenctl: \(refused) records refused") }
    }
}

/// `--tek`: a window's synthetic aggregates become one sighting of a known key, as a phone
/// advertising it at 0 dBm would be heard at −55 dBm (55 dB of attenuation, the "near" side of
/// every published threshold set).
private struct KeySightings {
    let crypto: ExposureKeyCrypto
    let rpik: RollingProximityIdentifierKey
    let aemk: AssociatedEncryptedMetadataKey

    init(tek: Bytes16) throws(OperationError) {
        do {
            crypto = try ExposureKeyCrypto()
        } catch {
            throw OperationError("\(error)")
        }
        (rpik, aemk) = crypto.keys(for: tek)
    }

    func replacing(_ records: [ContactAggregate]) -> [ContactAggregate] {
        guard var sighting = records.first, let interval = ENIntervalNumber(containing: sighting.firstSeen) else { return records }
        sighting.rpi = crypto.rpi(rpik: rpik, interval: interval)
        sighting.aem = crypto.aem(for: .version1_1(txPower: 0, calibrationConfidence: .low), aemk: aemk, rpi: sighting.rpi)
        sighting.reports = 1
        sighting.rssi = RSSISummary()
        sighting.rssi.add(-55)
        return [sighting]
    }
}
