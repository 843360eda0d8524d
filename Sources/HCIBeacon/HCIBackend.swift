// SPDX-License-Identifier: GPL-3.0-or-later

package import Beacon
package import GaendConfiguration
package import HCI
package import Logging

/// The beacon on a controller over HCI (`--radio` unix, tcp, serial or the kernel's user
/// channel): the link is the transport and its controller; a beacon run initialises it first.
package struct HCIBackend: BeaconBackend {
    /// Opens the controller's transport (the spec's; a test's socketpair).
    let open: @Sendable () throws(HCITransportError) -> FileDescriptorTransport
    let description: String
    /// Where a command's 2 s timeout runs (the continuous clock; a test's clock that never
    /// advances, so a machine slow to schedule the scripted controller is not a controller fault).
    let commandClock: any Clock<Duration>
    /// Where the advertising gap is measured.
    let monotonic: any Clock<Duration>
    let logger: Logger

    package init(spec: RadioSpec, monotonic: any Clock<Duration> = ContinuousClock(), logger: Logger) {
        self.init(description: "\(spec)", monotonic: monotonic, logger: logger) { () throws(HCITransportError) in try Self.open(spec) }
    }

    /// The back end on transports `open` makes, one per link (tests).
    package init(
        description: String, commandClock: any Clock<Duration> = ContinuousClock(), monotonic: any Clock<Duration> = ContinuousClock(),
        logger: Logger, open: @escaping @Sendable () throws(HCITransportError) -> FileDescriptorTransport
    ) {
        self.open = open
        self.description = description
        self.commandClock = commandClock
        self.monotonic = monotonic
        self.logger = logger
    }

    package var kind: BeaconMachine.Backend { .hci }
    package var linkName: String { "controller" }

    package func connect(reports: ReportRoute) async throws -> HCILink {
        let transport = try open()
        let controller = HCIController(
            transport: transport, clock: commandClock, logger: logger, lostReport: { reports.lost($0 == .overflow ? .overflow : .outsideWindow) })
        return HCILink(transport: transport, controller: controller, reports: reports, description: description, monotonic: monotonic, logger: logger)
    }

    static func open(_ spec: RadioSpec) throws(HCITransportError) -> FileDescriptorTransport {
        switch spec {
        case .unix(let path): return try .unix(path: path)
        case .tcp(let host, let port): return try .tcp(host: host, port: port)
        case .serial(let path, let baud): return try .serial(path: path, baud: baud)
        case .kernel(let index): return try .kernelUserChannel(index: index)
        case .bluez, .none:
            throw HCITransportError(operation: "opening \(spec)", detail: "not an HCI transport")
        }
    }
}

/// One connection to a controller: its reader, its reports handed to the route in order (the
/// drain `HCIRadio.stopScanning` waits on counts them), and its Hardware Error events as faults.
package struct HCILink: BeaconLink {
    let transport: FileDescriptorTransport
    let controller: HCIController
    let reports: ReportRoute
    let description: String
    let monotonic: any Clock<Duration>
    let logger: Logger
    let progress = ReportProgress()

    /// The reason a hardware error gives, whether its event or a command it failed tells it first.
    static let hardwareError = "the controller reported a hardware error"

    package func run(events: BeaconEvents) async {
        let (controller, reports, progress) = (controller, reports, progress)
        await withTaskGroup(of: Void.self) { group in
            // One consumer for the connection: an AsyncStream ends when an iteration of it is
            // cancelled. The n-th report taken is the controller's n-th queued.
            group.addTask {
                var taken: UInt64 = 0
                for await report in controller.reports {
                    await reports.deliver(HCIRadio.report(report))
                    taken += 1
                    progress.processed(taken)
                }
                progress.end()
            }
            group.addTask {
                for await _ in controller.hardwareErrorEvents { events.fault(Self.hardwareError) }
            }
            await controller.run()
        }
    }

    package func radio() async throws -> any BeaconRadio {
        let info = try await controller.initialize()
        logger.notice(
            "controller ready",
            metadata: [
                "radio": "\(description)", "hci.version": "\(info.hciVersion)", "hci.manufacturer": "\(info.manufacturer)",
                "txPower": "\(info.advertisingTxPower)", "extendedAdvertising": "\(info.supportsExtendedAdvertising)",
            ])
        let progress = progress
        return HCIRadio(controller: controller, info: info, clock: monotonic, drain: { await progress.wait(until: $0) })
    }

    package func fault(for error: any Error) -> String? {
        switch error {
        case HCIControllerError.closed, HCIControllerError.transport(_): nil
        case HCIControllerError.hardwareError(_): Self.hardwareError
        default: "\(error)"
        }
    }

    package func close() { transport.close() }
}
