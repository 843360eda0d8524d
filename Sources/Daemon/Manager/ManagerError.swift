// SPDX-License-Identifier: GPL-3.0-or-later

public import DBus
public import ENCore

/// Why a Manager1 call failed; each case is one `org.gaend.Error.<Name>` (docs/org.gaend.Manager1.rst).
/// All D-Bus error names of the daemon are made here.
public enum ManagerError: Error, Equatable, Sendable, CustomStringConvertible {
    case notAuthorized(String)
    case notEnabled(String)
    case rateLimited(nextAllowed: UnixTime)
    case inProgress(String)
    case badParameter(field: String, problem: String)
    case notSupported(String)
    case notConfigured(String)
    case bluetoothOff(String)
    case verificationFailed(String)
    case publishFailed(String)
    case failed(String)
    case `internal`(String)

    public var name: String {
        switch self {
        case .notAuthorized: "NotAuthorized"
        case .notEnabled: "NotEnabled"
        case .rateLimited: "RateLimited"
        case .inProgress: "InProgress"
        case .badParameter: "BadParameter"
        case .notSupported: "NotSupported"
        case .notConfigured: "NotConfigured"
        case .bluetoothOff: "BluetoothOff"
        case .verificationFailed: "VerificationFailed"
        case .publishFailed: "PublishFailed"
        case .failed: "Failed"
        case .internal: "Internal"
        }
    }

    public var description: String {
        switch self {
        case .notAuthorized(let message), .notEnabled(let message), .inProgress(let message), .notSupported(let message),
            .notConfigured(let message), .bluetoothOff(let message), .verificationFailed(let message), .publishFailed(let message),
            .failed(let message), .internal(let message):
            message
        case .rateLimited(let next): "the detection budget is spent; the next run is allowed at \(next) next=\(next.seconds)"
        case .badParameter(let field, let problem): "\(field): \(problem)"
        }
    }

    /// The error as D-Bus sends it.
    public var dbusError: DBusError {
        DBusError(DBusError.Name(rawValue: "org.gaend.Error." + name), description)
    }
}
