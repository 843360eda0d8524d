// SPDX-License-Identifier: GPL-3.0-or-later

/// When the writer makes appended records durable with fsync.
package enum DurabilityPolicy: Hashable, Sendable, CustomStringConvertible {
    /// After every scan window (the default): a crash loses at most the window in progress.
    case everyWindow
    /// After every `n` windows: fewer syncs on slow storage (an SD card), more to lose.
    case everyWindows(Int)
    /// Never explicitly: the kernel writes back when it likes. For tests of the other policies only.
    case kernelDecides

    package var description: String {
        switch self {
        case .everyWindow: return "every window"
        case .everyWindows(let n): return "every \(n) windows"
        case .kernelDecides: return "kernel decides"
        }
    }

    /// Whether to sync after the `windows`-th window since the last sync.
    func shouldSync(afterWindows windows: Int) -> Bool {
        switch self {
        case .everyWindow: return true
        case .everyWindows(let n): return windows >= max(1, n)
        case .kernelDecides: return false
        }
    }
}
