// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation
import Glibc

/// Starts programs with posix_spawn and waits for them with waitpid, not Foundation's Process.
///
/// Why: Foundation learns that a child ended through a socket the child inherits, watched by a
/// run loop on a thread of its own. In a sanitized run, with hundreds of threads and children in
/// the test process, that notice never came once: `timeout` had exited (a zombie nobody reaped),
/// its output pipes were at their end, and `waitUntilExit` waited 19 minutes, until a debugger's
/// attach woke the run loop. waitpid on the child's own PID cannot miss the exit.
///
/// A child gets /dev/null as input, its output where asked, no other descriptor of the runner's
/// (one left open in a long-lived child is how another test's wait never ends), no blocked
/// signal and default signal dispositions: as if started from a shell.
package enum SpawnedProgram {
    /// Where a child's output goes.
    package enum Output {
        /// Standard output and error appended to one file.
        case file(String)
        /// Standard output and error to these descriptors.
        case descriptors(output: Int32, error: Int32)
    }

    /// What a program run to its end left.
    package struct Outcome {
        package var exit: ChildExit
        package var output: Data
        package var error: Data
    }

    /// Closes every descriptor above 2, then runs its arguments. posix_spawn hands a child every
    /// descriptor the runner's other threads have open without close-on-exec at that moment
    /// (Foundation's Process leaves its sockets and pipes so). glibc's closefrom action needs
    /// _GNU_SOURCE, which Swift's Glibc module does not define.
    static let closingDescriptors = #"for fd in /proc/self/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$@""#

    /// Runs `command` to its end and returns its status and both outputs.
    package static func run(_ command: [String], environment: [String: String]? = nil) throws -> Outcome {
        let standardOutput = try pipe()
        let standardError: (read: Int32, write: Int32)
        do {
            standardError = try pipe()
        } catch {
            close(standardOutput.read)
            close(standardOutput.write)
            throw error
        }
        let pid: pid_t
        do {
            pid = try spawn(command, environment: environment, output: .descriptors(output: standardOutput.write, error: standardError.write))
        } catch {
            for fd in [standardOutput.read, standardOutput.write, standardError.read, standardError.write] { close(fd) }
            throw error
        }
        close(standardOutput.write)
        close(standardError.write)
        let (output, error) = readToEnd(standardOutput.read, standardError.read)
        close(standardOutput.read)
        close(standardError.read)
        guard let exit = wait(pid) else {
            throw ToolRunnerError(message: "waitpid(\(pid)) for \(command[0]): \(String(cString: strerror(errno)))")
        }
        return Outcome(exit: exit, output: output, error: error)
    }

    /// Starts `command`; the caller waits for it (`wait`).
    package static func spawn(_ command: [String], environment: [String: String]? = nil, output: Output) throws -> pid_t {
        let command = ["/bin/bash", "-c", closingDescriptors, "bash"] + command
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        switch output {
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .descriptors(let standardOutput, let standardError):
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
            posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A test runner's threads block some signals and the Swift runtime ignores SIGPIPE;
        // children would inherit both.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = command.map { strdup($0) }
        defer { arguments.forEach { free($0) } }
        let variables = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { variables?.forEach { free($0) } }
        var pid = pid_t()
        let result =
            if let variables {
                posix_spawn(&pid, command[0], &actions, &attributes, arguments + [nil], variables + [nil])
            } else {
                posix_spawn(&pid, command[0], &actions, &attributes, arguments + [nil], environ)
            }
        guard result == 0 else { throw ToolRunnerError(message: "\(command[0]) cannot be started: \(String(cString: strerror(result)))") }
        return pid
    }

    /// Waits for a child started by `spawn`, and reaps it; nil if waitpid fails.
    package static func wait(_ pid: pid_t) -> ChildExit? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return nil }
        }
        // The <sys/wait.h> macros, which Swift does not import: the low 7 bits are the signal that
        // ended the child (0 when it exited), the next byte its exit status.
        let signal = status & 0x7F
        return signal == 0 ? ChildExit(status: (status >> 8) & 0xFF, exited: true) : ChildExit(status: signal, exited: false)
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        // Close-on-exec at once (pipe2 needs _GNU_SOURCE too): a child that Foundation starts on
        // another thread must not hold a write end, or the read below never ends.
        guard Glibc.pipe(&ends) == 0 else { throw ToolRunnerError(message: "pipe: \(String(cString: strerror(errno)))") }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Reads both pipes until each is at its end, whichever the child writes first, so that a
    /// chatty program never blocks on a full pipe.
    private static func readToEnd(_ first: Int32, _ second: Int32) -> (Data, Data) {
        var data = [Data(), Data()]
        var open = [true, true]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while open[0] || open[1] {
            var fds = [
                pollfd(fd: open[0] ? first : -1, events: Int16(POLLIN), revents: 0), pollfd(fd: open[1] ? second : -1, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&fds, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where open[index] && fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress!, $0.count) }
                if count > 0 {
                    data[index].append(contentsOf: buffer[0..<count])
                } else if count == 0 || errno != EINTR {
                    open[index] = false
                }
            }
        }
        return (data[0], data[1])
    }
}
