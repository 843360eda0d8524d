// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// Where a back end hands what its radio heard: the scanner of the beacon running now, whichever
/// that is. A report no open window takes (none runs, or it arrived between windows) is counted
/// here, never dropped unsaid; so are those a back end had to drop (a full queue).
package final class ReportRoute: Sendable {
    private let scanner = Mutex<Scanner?>(nil)
    private let outside = Atomic<Int>(0)
    private let overflowed = Atomic<Int>(0)

    package init() {}

    /// The scanner of the beacon that starts now.
    package func set(_ scanner: Scanner?) { self.scanner.withLock { $0 = scanner } }

    package func deliver(_ report: RadioReport) async {
        let current = scanner.withLock { $0 }
        if let current, await current.handle(report) { return }
        outside.add(1, ordering: .relaxed)
    }

    package enum Loss: Sendable {
        /// The back end's queue was full.
        case overflow
        /// The back end knows it arrived with no scan on, so no window can take it.
        case outsideWindow
    }

    /// A report the back end could not hand on.
    package func lost(_ loss: Loss) {
        switch loss {
        case .overflow: overflowed.add(1, ordering: .relaxed)
        case .outsideWindow: outside.add(1, ordering: .relaxed)
        }
    }

    /// Reports that arrived with no window open to take them.
    package var outsideWindows: Int { outside.load(ordering: .relaxed) }

    /// Reports a back end dropped on the way (its queue full).
    package var droppedOnTheWay: Int { overflowed.load(ordering: .relaxed) }
}
