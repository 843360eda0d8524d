// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
internal import CSpawn

/// A program started with posix_spawn in a process group of its own, with the descriptors it is
/// given as its standard input, output and error and no other, and reaped by its PID alone.
///
/// Foundation's `Process` was not enough for the exposure hook (issue 40, item 13): it hands the
/// child the socket it learns the end by, so a grandchild left running delayed the end until it
/// exited; and a time limit could only kill the one PID, not what the program started.
package struct ChildProcess: Sendable {
    package let pid: Int32

    /// How a child ended.
    package enum Ending: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        package var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }
    }

    /// Starts `program` (no shell, no PATH search) with only `environment`, in `directory`, its
    /// standard input `input` and standard output and error `output`; every other descriptor is
    /// closed in the child, signal dispositions and the mask are the defaults, and the child leads
    /// a new process group, so `killGroup` reaches everything it starts that stays in the group.
    package static func spawn(
        program: String, environment: [String: String], directory: String, input: Int32, output: Int32
    ) throws(Errno) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { throw Errno(ENOMEM) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawnattr_init(&attributes) == 0 else { throw Errno(ENOMEM) }
        defer { posix_spawnattr_destroy(&attributes) }

        var failure: Int32 = 0
        func check(_ result: Int32) { if failure == 0, result != 0 { failure = result } }
        check(posix_spawn_file_actions_adddup2(&actions, input, 0))
        check(posix_spawn_file_actions_adddup2(&actions, output, 1))
        check(posix_spawn_file_actions_adddup2(&actions, output, 2))
        check(cgaend_spawn_add_closefrom(&actions, 3))
        check(cgaend_spawn_add_chdir(&actions, directory))
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        check(posix_spawnattr_setsigdefault(&attributes, &defaults))
        check(posix_spawnattr_setsigmask(&attributes, &empty))
        check(posix_spawnattr_setpgroup(&attributes, 0))
        check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)))
        guard failure == 0 else { throw Errno(failure) }

        let arguments: [UnsafeMutablePointer<CChar>?] = [program.withCString { strdup($0) }, nil]
        let variables: [UnsafeMutablePointer<CChar>?] =
            environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)".withCString { strdup($0) } } + [nil]
        defer {
            for pointer in arguments { free(pointer) }
            for pointer in variables { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, arguments, variables)
        guard result == 0 else { throw Errno(result) }
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end and reaps it; blocks the calling thread.
    package func waitForEnd() -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return .exited(-1) }
        }
        return Self.ending(status)
    }

    /// A descriptor (the caller's to close) that is readable once the child has ended: its end
    /// waited for in poll(2), with no thread blocked in waitpid.
    package func endDescriptor() throws(Errno) -> Int32 {
        try SystemCall.retrying { cgaend_pidfd_open(pid) }
    }

    /// Reaps the child if it has ended; nil while it runs.
    package func reapIfEnded() -> Ending? {
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return Self.ending(status) }
            if reaped == 0 { return nil }
            if errno != EINTR { return .exited(-1) }
        }
    }

    // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
    private static func ending(_ status: Int32) -> Ending {
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// Sends `signal` to the child's whole process group; a group already gone is no error.
    package func killGroup(_ signal: Int32 = SIGKILL) {
        _ = kill(-pid, signal)
    }
}
