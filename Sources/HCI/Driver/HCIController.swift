// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
package import Logging

/// What the driver reports when a command or the controller fails.
package enum HCIControllerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The controller refused the command.
    case status(HCIStatus, HCIOpcode)
    /// No Command Complete or Command Status within the timeout.
    case timeout(HCIOpcode)
    case transport(HCITransportError)
    /// The controller reported a Hardware Error while the command was pending.
    case hardwareError(UInt8)
    /// The transport closed; nothing more will come.
    case closed
    /// A completion too short for what the command returns.
    case malformedCompletion(HCIOpcode)

    package var description: String {
        switch self {
        case .status(let status, let opcode): return "command \(opcode) failed: \(status)"
        case .timeout(let opcode): return "command \(opcode) got no answer in time"
        case .transport(let error): return "\(error)"
        case .hardwareError(let code): return "the controller reported hardware error 0x\(String(code, radix: 16))"
        case .closed: return "the controller connection closed"
        case .malformedCompletion(let opcode): return "the completion of \(opcode) is too short"
        }
    }
}

/// What `initialize()` learned about the controller.
package struct ControllerInfo: Hashable, Sendable {
    package var hciVersion: UInt8
    package var manufacturer: UInt16
    package var leFeatures: UInt64
    /// LE Read Advertising Channel Tx Power, dBm.
    package var advertisingTxPower: Int8

    /// LE Extended Advertising (feature bit 12).
    package var supportsExtendedAdvertising: Bool { leFeatures & (1 << 12) != 0 }
}

/// Drives one controller over a transport: commands one at a time under the controller's flow
/// control (Num_HCI_Command_Packets), each with a timeout, statuses mapped to typed errors, and
/// advertising reports handed to `reports`. `run()` reads the controller until the transport ends.
package actor HCIController {

    private let transport: any HCITransport
    private let commandTimeout: Duration
    private let clock: any Clock<Duration>
    private let logger: Logger
    /// Who may send a command now: one at a time, while the controller accepts one.
    private struct Slot {
        /// How many commands the controller accepts now (its last Num_HCI_Command_Packets).
        var allowedPackets = 1
        var busy = false
        var closed = false
        var free: Bool { closed || (!busy && allowedPackets > 0) }
    }
    private let slot = ConditionLock(Slot())
    /// A command's answer, and how many reports had been queued when it came.
    package struct Completion: Sendable {
        package var parameters: [UInt8]
        /// `reportsQueued` at the completion: the reports the controller sent before it.
        package var reportsBefore: UInt64
    }
    private var pending: (token: Int, command: HCICommand, continuation: CheckedContinuation<Result<Completion, HCIControllerError>, Never>)?
    /// Whether the controller may be scanning: from the moment a scan's enable is sent (a
    /// controller may report before its completion) until its disable completes. A report that
    /// arrives otherwise belongs to no scan: counted, not queued.
    private var scanning = false
    /// Reports that arrived while no scan was on.
    package private(set) var reportsOutsideScans = 0
    private var nextToken = 0
    private let reportContinuation: AsyncStream<AdvertisingReport>.Continuation
    /// Advertising reports from both report events, in order. The n-th report queued is the n-th
    /// taken from the stream: a full queue drops the newest (`reportsDropped`), never one queued.
    package nonisolated let reports: AsyncStream<AdvertisingReport>
    /// Reports queued on `reports` so far.
    package private(set) var reportsQueued: UInt64 = 0
    /// Reports dropped because the queue was full (the host fell 4,096 reports behind).
    package private(set) var reportsDropped = 0
    /// Told of each report not queued, as it is (the owner counts them with what else it lost).
    private let lostReport: @Sendable (LostReport) -> Void

    package enum LostReport: Sendable {
        /// The queue was full.
        case overflow
        /// No scan was on.
        case outsideScan
    }
    /// How many Hardware Error events arrived; `hardwareErrorEvents` yields the new count with
    /// each one, so the owner can re-initialize the controller (Core Vol 4 Part E 7.7.16) and tell
    /// a fresh fault from one it already handled.
    package private(set) var hardwareErrors = 0
    package nonisolated let hardwareErrorEvents: AsyncStream<Int>
    private let hardwareErrorContinuation: AsyncStream<Int>.Continuation
    package private(set) var malformedEvents = 0

    package init(
        transport: any HCITransport, commandTimeout: Duration = .seconds(2),
        clock: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "gaend.hci"),
        lostReport: @escaping @Sendable (LostReport) -> Void = { _ in }
    ) {
        self.lostReport = lostReport
        self.transport = transport
        self.commandTimeout = commandTimeout
        self.clock = clock
        self.logger = logger
        (reports, reportContinuation) = AsyncStream<AdvertisingReport>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        (hardwareErrorEvents, hardwareErrorContinuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Reads the controller until the transport ends; then every pending and later command fails
    /// with `.closed` and `reports` finishes.
    package func run() async {
        do {
            for try await packet in transport.packets where packet.type == .event {
                handle(packet.bytes)
            }
        } catch {
            logger.warning("controller transport failed", metadata: ["error": "\(error)"])
        }
        slot.withLock { $0.closed = true }
        finishPending(.closed)
        reportContinuation.finish()
        hardwareErrorContinuation.finish()
    }

    /// Sends a command and waits for its completion; returns the return parameters after the
    /// status byte (Command Status answers have none).
    @discardableResult
    package func send(_ command: HCICommand) async throws(HCIControllerError) -> [UInt8] {
        try await sendMarked(command).parameters
    }

    /// `send`, telling also how many reports were queued before the completion: what a scan's
    /// disable must wait for to have every report of its window handed on.
    package func sendMarked(_ command: HCICommand) async throws(HCIControllerError) -> Completion {
        // A cancelled task keeps its turn: its command (stopping a scan at shutdown, say) is still
        // sent, and answered or timed out.
        while true {
            let taken = slot.withLock { slot -> Bool? in
                if slot.closed { return nil }
                guard slot.free else { return false }
                slot.busy = true
                return true
            }
            guard let taken else { throw .closed }
            if taken { break }
            await slot.wait(cancellable: false) { $0.free }
        }
        defer { slot.withLock { $0.busy = false } }
        nextToken += 1
        let token = nextToken
        let timeout = commandTimeout
        let clock = self.clock
        let result = await withTaskGroup(of: Void.self) { group -> Result<Completion, HCIControllerError> in
            group.addTask {
                try? await clock.sleep(for: timeout)
                await self.expire(token)
            }
            let result = await withCheckedContinuation { continuation in
                pending = (token, command, continuation)
                if command.scanEnable == true { scanning = true }
                do throws(HCITransportError) {
                    try transport.send(command.h4)
                } catch {
                    finishPending(.transport(error))
                }
            }
            group.cancelAll()
            return result
        }
        return try result.get()
    }

    /// Reset, version, event masks, LE features and advertising TX power: what the daemon needs to
    /// know before it advertises and scans.
    package func initialize() async throws(HCIControllerError) -> ControllerInfo {
        try await send(.reset)
        let version = try await send(.readLocalVersionInformation)
        guard version.count >= 8 else { throw .malformedCompletion(.readLocalVersionInformation) }
        // Events: Hardware Error (bit 15), LE Meta (bit 61), plus the spec's defaults.
        try await send(.setEventMask(0x2000_9FFF_FFFF_FFFF | 1 << 15 | 1 << 61))
        // LE subevents: Advertising Report (bit 1), Extended Advertising Report (bit 12).
        try await send(.leSetEventMask(0x0000_0000_0000_101F))
        let features = try await send(.leReadLocalSupportedFeatures)
        guard features.count >= 8 else { throw .malformedCompletion(.leReadLocalSupportedFeatures) }
        let power = try await send(.leReadAdvertisingChannelTxPower)
        guard power.count >= 1 else { throw .malformedCompletion(.leReadAdvertisingChannelTxPower) }
        return ControllerInfo(
            hciVersion: version[0], manufacturer: UInt16(version[4]) | UInt16(version[5]) << 8,
            leFeatures: features.prefix(8).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) },
            advertisingTxPower: Int8(bitPattern: power[0]))
    }

    // MARK: - Private

    private func handle(_ bytes: [UInt8]) {
        let event: HCIEvent
        do {
            event = try HCIEvent(packet: bytes)
        } catch {
            // Nothing a controller sends may stop the daemon: count it and go on.
            malformedEvents += 1
            logger.debug("malformed HCI event ignored", metadata: ["error": "\(error)"])
            return
        }
        switch event {
        case .commandComplete(let allowed, let opcode, let parameters):
            slot.withLock { $0.allowedPackets = Int(allowed) }
            guard pending?.command.opcode == opcode else { break }
            guard let status = parameters.first else {
                finishPending(.malformedCompletion(opcode))
                break
            }
            if status == HCIStatus.success.rawValue {
                // A reset ends a scan too.
                if pending?.command.scanEnable == false || opcode == .reset { scanning = false }
                complete(.success(Array(parameters.dropFirst())))
            } else {
                finishPending(.status(HCIStatus(rawValue: status), opcode))
            }
        case .commandStatus(let status, let allowed, let opcode):
            slot.withLock { $0.allowedPackets = Int(allowed) }
            guard pending?.command.opcode == opcode else { break }
            if status == .success { complete(.success([])) } else { finishPending(.status(status, opcode)) }
        case .hardwareError(let code):
            hardwareErrors += 1
            logger.error("controller hardware error", metadata: ["hci.code": "0x\(String(code, radix: 16))"])
            finishPending(.hardwareError(code))
            hardwareErrorContinuation.yield(hardwareErrors)
        case .advertisingReports(let reports):
            for report in reports {
                if !scanning {
                    reportsOutsideScans += 1
                    lostReport(.outsideScan)
                } else if case .enqueued = reportContinuation.yield(report) {
                    reportsQueued += 1
                } else {
                    reportsDropped += 1
                    lostReport(.overflow)
                }
            }
        case .other:
            break
        }
    }

    private func expire(_ token: Int) {
        guard let pending, pending.token == token else { return }
        logger.warning("HCI command timed out", metadata: ["hci.opcode": "\(pending.command.opcode)"])
        finishPending(.timeout(pending.command.opcode))
    }

    private func complete(_ result: Result<[UInt8], HCIControllerError>) {
        let current = pending
        pending = nil
        current?.continuation.resume(returning: result.map { Completion(parameters: $0, reportsBefore: reportsQueued) })
    }

    private func finishPending(_ error: HCIControllerError) {
        complete(.failure(error))
    }
}
