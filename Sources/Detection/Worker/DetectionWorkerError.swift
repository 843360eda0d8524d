// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore

/// Why a detection run did not happen or did not finish. Each maps to a D-Bus error later.
public enum DetectionWorkerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The budget is spent; the next run is allowed at this time.
    case rateLimited(nextAllowed: UnixTime)
    /// A run is already in progress: runs never overlap.
    case busy
    /// The run passed its deadline and was cancelled.
    case deadlineExceeded(after: Duration)
    case download(String)
    case detection(String)
    case storage(String)

    public var description: String {
        switch self {
        case .rateLimited(let next): return "rate limited: the next detection is allowed at \(next)"
        case .busy: return "a detection is already running"
        case .deadlineExceeded(let after): return "the detection did not finish within \(after) and was cancelled"
        case .download(let reason): return "downloading key files: \(reason)"
        case .detection(let reason): return "detection: \(reason)"
        case .storage(let reason): return "storing detection state: \(reason)"
        }
    }
}
