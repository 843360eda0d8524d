// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions

/// How far a back end's consumer of reports has got (by a sequence number the back end gives its
/// reports: bluetoothd's signals' `DBusMessage.sequence`, the controller's report count), and
/// waits for it to get somewhere. The barrier behind `BeaconRadio.stopScanning`'s promise: a scan
/// window closes only after the reports its radio sent before the scan stopped reached the scanner.
package final class ReportProgress: Sendable {
    private struct State {
        var processed: UInt64 = 0
        var ended = false
    }

    private let state = ConditionLock(State())

    package init() {}

    /// The consumer has handled everything up to `sequence`.
    package func processed(_ sequence: UInt64) {
        state.withLock { $0.processed = max($0.processed, sequence) }
    }

    /// The stream ended: nothing more will be processed, nobody waits for it.
    package func end() {
        state.withLock { $0.ended = true }
    }

    /// Returns once `target` is processed, the stream ended, or the task is cancelled.
    package func wait(until target: UInt64) async {
        await state.wait { $0.ended || $0.processed >= target }
    }
}
