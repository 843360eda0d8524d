// SPDX-License-Identifier: GPL-3.0-or-later

package import DBus
package import Detection
package import ENCore
import GaendAPI

/// Why a Manager1 call failed; each case is one `org.gaend.Error.<Name>` (docs/org.gaend.Manager1.rst).
/// All D-Bus error names of the daemon are made here.
package enum ManagerError: Error, Equatable, Sendable, CustomStringConvertible {
    case notAuthorized(String)
    case notEnabled(String)
    case rateLimited(nextAllowed: UnixTime)
    case inProgress(String)
    case badParameter(field: String, problem: String)
    case notSupported(String)
    case notConfigured(String)
    case bluetoothOff(String)
    /// The wall clock cannot be trusted: nothing is released, shared, recorded or detected on it.
    case clockUntrusted(String)
    case verificationFailed(String)
    case publishFailed(String)
    /// A detection run that failed, with its cause (D-Bus `Failed`).
    case detectionFailed(DetectionWorkerError)
    case failed(String)
    case `internal`(String)

    /// Its name in the contract (`Manager1.ErrorName`).
    package var name: String { errorName.rawValue }

    var errorName: Manager1.ErrorName {
        switch self {
        case .notAuthorized: .notAuthorized
        case .notEnabled: .notEnabled
        case .rateLimited: .rateLimited
        case .inProgress: .inProgress
        case .badParameter: .badParameter
        case .notSupported: .notSupported
        case .notConfigured: .notConfigured
        case .bluetoothOff: .bluetoothOff
        case .clockUntrusted: .clockUntrusted
        case .verificationFailed: .verificationFailed
        case .publishFailed: .publishFailed
        case .failed, .detectionFailed: .failed
        case .internal: .internal
        }
    }

    package var description: String {
        switch self {
        case .notAuthorized(let message), .notEnabled(let message), .inProgress(let message), .notSupported(let message),
            .notConfigured(let message), .bluetoothOff(let message), .verificationFailed(let message), .publishFailed(let message),
            .failed(let message), .internal(let message):
            message
        case .clockUntrusted(let reason): "not while the clock is not trusted: \(reason)"
        case .detectionFailed(let cause): "\(cause)"
        case .rateLimited(let next): "the detection budget is spent; the next run is allowed at \(next) next=\(next.seconds)"
        case .badParameter(let field, let problem): "\(field): \(problem)"
        }
    }

    /// The error as D-Bus sends it; escaped, as a message may quote a server's bytes (issue 53).
    package var dbusError: DBusError {
        DBusError(DBusError.Name(rawValue: errorName.qualified), OutsideText.escaped(description))
    }
}
