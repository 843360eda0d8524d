// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Testing

/// How the process suites run and wait for programs (`ToolRunner`, `SpawnedProgram`,
/// `Process.waitForExit`): what every other process test relies on.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct ChildProcessTests {
    /// Status and both outputs come back apart, in full, however much the child writes to each.
    @Test func outputsAndStatusComeBackWhole() throws {
        let run = try ToolRunner.runProgram("/bin/sh", ["-c", "head -c 300000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2; exit 3"])
        #expect(run.status == 3)
        #expect(run.standardOutput.count == 300_000 && run.standardOutput.allSatisfy { $0 == "o" })
        #expect(run.standardError.count == 200_000 && run.standardError.allSatisfy { $0 == "e" })
    }

    /// A child holds nothing of the runner's but its three standard descriptors, blocks no signal
    /// and ignores none: what keeps another test's wait from lasting as long as this child.
    @Test func aChildGetsNoDescriptorAndNoSignalStateOfOurs() throws {
        // A descriptor of ours without close-on-exec, as Foundation leaves its sockets.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        // And with every signal blocked on this thread, as on some of a test runner's threads.
        var all = sigset_t()
        var before = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &before)
        defer { pthread_sigmask(SIG_SETMASK, &before, nil) }
        // The signals are read by grep from its own status: the shell blocks every signal while
        // it starts a command, so its own status, read meanwhile, showed them all blocked once.
        let run = try ToolRunner.runProgram("/bin/sh", ["-c", "ls /proc/$$/fd; grep -E '^Sig(Blk|Ign):' /proc/self/status"])
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.filter { $0.allSatisfy(\.isNumber) } == ["0", "1", "2"], "\(run.standardOutput)")
        // Signals 1-31, the low bits of each mask: glibc keeps 32 and 33 for its threads.
        func standardSignals(_ name: String) -> UInt64? {
            lines.first { $0.hasPrefix(name + ":") }.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
                .map { $0 & 0x7FFF_FFFF }
        }
        #expect(standardSignals("SigBlk") == 0, "\(run.standardOutput)")
        #expect(standardSignals("SigIgn") == 0, "\(run.standardOutput)")
    }

    /// `waitForExit` tells an exit status from a signal, for a child Foundation started.
    @Test func waitForExitTellsAStatusFromASignal() throws {
        func exit(of script: String) throws -> ChildExit {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            try process.run()
            return process.waitForExit()
        }
        #expect(try exit(of: "exit 0") == .success)
        #expect(try exit(of: "exit 7") == ChildExit(status: 7, exited: true))
        #expect(try exit(of: "kill -KILL $$") == ChildExit(status: SIGKILL, exited: false))
    }
}
