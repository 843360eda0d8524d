// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// Ends a program the test started and every process below it, by their PIDs, with SIGKILL: a
/// program started from the test runner may inherit a mask that blocks SIGTERM (cockpit-ws and
/// chromedriver did, and a wait for their exit never ended), and what they started (the bridge,
/// Chromium and its helpers) would otherwise outlive the test.
enum ProcessTree {
    static func end(_ process: Process) {
        guard process.isRunning else { return }
        for pid in descendants(of: process.processIdentifier).reversed() { kill(pid, SIGKILL) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The processes below `root`, parents before children (by /proc/PID/stat's parent field).
    static func descendants(of root: pid_t) -> [pid_t] {
        var parents = [pid_t: pid_t]()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[pid] = parent }
        }
        var found = [pid_t]()
        var frontier = [root]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }
}
