// SPDX-License-Identifier: GPL-3.0-or-later

public import ContactLog
public import ENCore
public import HCI
public import KeySchedule
public import Logging
public import Radio
public import ServiceLifecycle
import Storage
import Synchronization

/// The beacon as a service: connects to the controller, initializes it, advertises and rotates,
/// scans in windows into the contact log, and reconnects with backoff when the controller goes
/// away. On graceful shutdown it ends the open scan window (flushing it to the log), stops
/// advertising and syncs the log.
public struct RadioService: Service {
    let spec: RadioSpec
    let settings: RadioSettings
    let keys: KeySchedule
    let log: ContactLogWriter
    let clock: any WallClock
    let logger: Logger

    public init(spec: RadioSpec, settings: RadioSettings, keys: KeySchedule, log: ContactLogWriter, clock: any WallClock, logger: Logger) {
        self.spec = spec
        self.settings = settings
        self.keys = keys
        self.log = log
        self.clock = clock
        self.logger = logger
    }

    enum Stop { case shutdown, lost }

    public func run() async throws {
        var backoff = Duration.seconds(1)
        while true {
            let transport: FileDescriptorTransport
            do {
                transport = try Self.open(spec)
            } catch {
                logger.warning("controller unreachable; retrying", metadata: ["radio": "\(spec)", "error": "\(error)", "retryIn": "\(backoff)"])
                if await sleepOrShutdown(backoff) { return }
                backoff = min(backoff * 2, .seconds(30))
                continue
            }
            let controller = HCIController(transport: transport, logger: logger)
            let stop = await withTaskGroup(of: Stop?.self) { outer -> Stop in
                outer.addTask {
                    await controller.run()
                    return nil
                }
                let stop = await withTaskGroup(of: Stop.self) { inner -> Stop in
                    inner.addTask { await self.operate(controller) }
                    inner.addTask {
                        try? await gracefulShutdown()
                        return .shutdown
                    }
                    let first = await inner.next() ?? .lost
                    inner.cancelAll()
                    return first
                }
                if stop == .shutdown { await finish(controller) }
                transport.close()
                await outer.waitForAll()
                return stop
            }
            if stop == .shutdown { return }
            backoff = .seconds(1)
            logger.warning("controller lost; reconnecting", metadata: ["radio": "\(spec)"])
            if await sleepOrShutdown(backoff) { return }
        }
    }

    /// The advertiser and scanner on a connected controller, until it fails or is cancelled.
    private func operate(_ controller: HCIController) async -> Stop {
        do {
            let info = try await controller.initialize()
            logger.notice(
                "controller ready",
                metadata: [
                    "radio": "\(spec)", "hci.version": "\(info.hciVersion)", "hci.manufacturer": "\(info.manufacturer)",
                    "txPower": "\(info.advertisingTxPower)", "extendedAdvertising": "\(info.supportsExtendedAdvertising)",
                ])
            let advertiser = try Advertiser(controller: controller, keys: keys, clock: clock, settings: settings, logger: logger)
            let scanner = Scanner(controller: controller, log: log, clock: clock, settings: settings, logger: logger)
            self.state.set(advertiser: advertiser, scanner: scanner)
            let extended = info.supportsExtendedAdvertising
            await scanner.useExtendedCommands(extended)
            try await advertiser.start(controllerTxPower: info.advertisingTxPower, extended: extended)
            let key = try await keys.currentKey()
            logger.notice("advertising", metadata: ["key.rollingStart": "\(key.rollingStartIntervalNumber)"])
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await report in controller.reports { await scanner.handle(report) }
                    try Task.checkCancellation()
                    throw HCIControllerError.closed
                }
                group.addTask { try await self.timeline(advertiser: advertiser, scanner: scanner) }
                _ = try await group.next()
            }
        } catch {
            if Task.isCancelled { return .shutdown }
            logger.warning("radio stopped", metadata: ["error": "\(error)"])
        }
        return .lost
    }

    /// One loop owns the controller's timeline. Controllers refuse LE Set Random Address while
    /// scanning as well as while advertising (Core Vol 4 Part E 7.8.4), so rotations happen between
    /// scan windows; a window is cut short when a rotation falls due, so the rotation timer and the
    /// UTC-midnight key change are kept to the second.
    private func timeline(advertiser: Advertiser, scanner: Scanner) async throws {
        let monotonic = ContinuousClock()
        var rotationDue = monotonic.now.advanced(by: .seconds(await advertiser.nextRotationDelay()))
        func rotateIfDue() async throws {
            guard monotonic.now >= rotationDue else { return }
            try await advertiser.rotate()
            rotationDue = monotonic.now.advanced(by: .seconds(await advertiser.nextRotationDelay()))
        }
        func sleep(atMost duration: Duration) async throws {
            let until = min(monotonic.now.advanced(by: duration), rotationDue)
            if until > monotonic.now { try await Task.sleep(until: until, clock: monotonic) }
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
    /// Flushes the open window, stops advertising, syncs the log.
    private func finish(_ controller: HCIController) async {
        if let scanner = state.scanner {
            do {
                try await scanner.endWindow()
            } catch {
                logger.warning("closing the scan window", metadata: ["error": "\(error)"])
            }
        }
        try? await state.advertiser?.stop()
        try? await log.sync()
        logger.notice("radio stopped for shutdown")
    }

    /// Sleeps, or returns `true` early when shutdown is requested.
    private func sleepOrShutdown(_ duration: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await Task.sleep(for: duration)
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

    let state = ServiceState()

    static func open(_ spec: RadioSpec) throws(HCITransportError) -> FileDescriptorTransport {
        switch spec {
        case .unix(let path): return try .unix(path: path)
        case .tcp(let host, let port): return try .tcp(host: host, port: port)
        case .serial(let path, let baud): return try .serial(path: path, baud: baud)
        case .kernel(let index): return try .kernelUserChannel(index: index)
        case .bluez, .none:
            throw HCITransportError(operation: "opening \(spec)", errno: 0, detail: "not an HCI transport")
        }
    }
}

/// The advertiser and scanner of the current connection, for the shutdown path.
final class ServiceState: Sendable {
    private let current = Mutex<(advertiser: Advertiser?, scanner: Scanner?)>((nil, nil))

    func set(advertiser: Advertiser, scanner: Scanner) {
        current.withLock { $0 = (advertiser, scanner) }
    }

    var advertiser: Advertiser? { current.withLock { $0.advertiser } }
    var scanner: Scanner? { current.withLock { $0.scanner } }
}
