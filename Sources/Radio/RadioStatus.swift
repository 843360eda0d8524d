// SPDX-License-Identifier: GPL-3.0-or-later

public import Logging
import Synchronization

/// What the radio is doing, as the daemon's D-Bus API reports it.
public enum RadioStatus: String, Sendable, Hashable {
    /// Not yet running (connecting, initializing).
    case starting
    /// Advertising and scanning.
    case active
    /// The adapter is powered off (BlueZ), or the controller is not reachable.
    case bluetoothOff = "bluetooth-off"
    /// No radio configured.
    case none
}

/// The radio's current status, set by the radio service and read by whoever reports it; every
/// change is logged once.
public final class RadioStatusBoard: Sendable {
    private let state: Mutex<(status: RadioStatus, continuations: [Int: AsyncStream<RadioStatus>.Continuation], next: Int)>
    private let logger: Logger

    public init(_ initial: RadioStatus = .starting, logger: Logger = Logger(label: "gaend.radio")) {
        state = Mutex((initial, [:], 0))
        self.logger = logger
    }

    public var status: RadioStatus { state.withLock { $0.status } }

    public func set(_ status: RadioStatus, reason: String? = nil) {
        let continuations = state.withLock { state -> [AsyncStream<RadioStatus>.Continuation]? in
            guard state.status != status else { return nil }
            state.status = status
            return Array(state.continuations.values)
        }
        guard let continuations else { return }
        var metadata: Logger.Metadata = ["status": "\(status.rawValue)"]
        if let reason { metadata["reason"] = "\(reason)" }
        logger.notice("radio status", metadata: metadata)
        for continuation in continuations { continuation.yield(status) }
    }

    /// The current status, then each change.
    public func updates() -> AsyncStream<RadioStatus> {
        let (stream, continuation) = AsyncStream<RadioStatus>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            continuation.yield(state.status)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }
}
