// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import GaendAPI

/// What gaend is doing, as its owner is told: Manager1's Status and StatusReason, decided once
/// (`Manager.ownerStatus()`), and the exposure days. Manager1's properties, the status LED and
/// systemd's status line read this one value; none parses it back from a string.
package struct OwnerStatus: Sendable, Equatable {
    package var status: Manager1.Status
    /// Why, when it is not active ("" when it is).
    package var reason: String
    package var exposureDays: [UTCDay]
    /// What went wrong with the last detection (LastDetectionError: its error, or the key files
    /// it refused), whatever the status; `nil` when nothing did.
    package var detectionProblem: String?

    package init(status: Manager1.Status, reason: String, exposureDays: [UTCDay], detectionProblem: String? = nil) {
        self.status = status
        self.reason = reason
        self.exposureDays = exposureDays
        self.detectionProblem = detectionProblem
    }

    /// StatusReason: why the status is what it is, and the last detection's problem, so that a
    /// refused key file is said wherever the status is (issue 46).
    package var statusReason: String {
        let detection = detectionProblem.map { "the last detection: \($0)" }
        return [reason.isEmpty ? nil : reason, detection].compactMap { $0 }.joined(separator: "; ")
    }

    /// systemd's status line (`STATUS=`).
    package var systemdLine: String {
        "exposure notification \(status.rawValue)" + (detectionProblem.map { "; the last detection: \($0)" } ?? "")
    }
}

/// Where the owner's status comes from (Manager1's manager), and when it may have changed.
package protocol OwnerStatusSource: Sendable {
    func ownerStatus() async -> OwnerStatus
    /// Calls `changed` whenever the status may have changed, until cancelled; changes by time
    /// alone (midnight) are waited for on `ticks`.
    func followStatus(ticks: any Clock<Duration>, _ changed: @escaping @Sendable () -> Void) async
}
