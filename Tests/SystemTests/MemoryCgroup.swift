// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// A memory cgroup of the test's own, with a limit: cgroup v2's where the unified hierarchy has the
/// memory controller, else v1's (`/sys/fs/cgroup/memory`, what these machines have). Processes
/// are moved in by writing their PID to `procs`; the group is removed at `remove()`, after they
/// have ended. Nil where neither can be made (not root, no controller): the caller skips.
final class MemoryCgroup {
    let path: String
    let isV2: Bool

    /// `highBytes` is cgroup v2's `memory.high` (systemd's MemoryHigh): v1 has none.
    init?(name: String, limitBytes: Int, highBytes: Int? = nil) {
        let v2Root = "/sys/fs/cgroup"
        let controllers = (try? String(contentsOfFile: v2Root + "/cgroup.controllers", encoding: .utf8)) ?? ""
        if controllers.split(separator: " ").contains(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "memory" }) {
            isV2 = true
            path = v2Root + "/" + name
        } else if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/memory.limit_in_bytes") {
            isV2 = false
            path = "/sys/fs/cgroup/memory/" + name
        } else {
            return nil
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { return nil }
        let limit = "\(limitBytes)"
        if isV2 {
            guard write("memory.max", limit) else {
                remove()
                return nil
            }
            _ = write("memory.swap.max", "0")
            if let highBytes { _ = write("memory.high", "\(highBytes)") }
        } else {
            guard write("memory.limit_in_bytes", limit) else {
                remove()
                return nil
            }
            // With swap accounting, swap may not stretch the limit either.
            if FileManager.default.fileExists(atPath: path + "/memory.memsw.limit_in_bytes") { _ = write("memory.memsw.limit_in_bytes", limit) }
        }
    }

    /// The file a PID is written to, to move that process in.
    var procs: String { path + "/cgroup.procs" }

    /// The group's peak memory use (the kernel's, page cache included), bytes.
    var peakBytes: Int? { read(isV2 ? "memory.peak" : "memory.max_usage_in_bytes").flatMap { Int($0) } }

    /// Processes the kernel's OOM killer ended in the group.
    var oomKills: Int {
        let text = read(isV2 ? "memory.events" : "memory.oom_control") ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("oom_kill ") {
            return Int(line.dropFirst("oom_kill ".count)) ?? 0
        }
        return 0
    }

    func remove() {
        rmdir(path)
    }

    private func write(_ file: String, _ value: String) -> Bool {
        (try? value.write(toFile: path + "/" + file, atomically: false, encoding: .utf8)) != nil
    }

    private func read(_ file: String) -> String? {
        (try? String(contentsOfFile: path + "/" + file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
