// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import PostgreSQL
import Synchronization
import SystemCalls

/// A private PostgreSQL server: `initdb` in a fresh directory, `pg_ctl start` on a free port of
/// 127.0.0.1 (and a socket in that directory), ended by `pg_ctl stop -m fast` or, failing that,
/// by its PID. A watchdog shell ends it too if the test runner dies without stopping it, so no
/// server outlives the run.
///
/// The programs are started with posix_spawn, not Foundation's Process: Process learns that a
/// child ended when a socket the child inherits is closed, and the server pg_ctl leaves behind
/// inherits it too, so waiting for pg_ctl would wait for the server.
package final class PostgreSQLServer: @unchecked Sendable {
    // @unchecked: everything is set in init and read-only after, except `stopped` (a Mutex).
    package let port: Int
    let directory: String
    let binaries: String
    let postmaster: pid_t
    let watchdog: pid_t
    private let stopped = Mutex(false)

    /// The directory of initdb, pg_ctl and postgres: GAEND_POSTGRES_BIN when set (make check sets
    /// it, so that missing binaries fail the tests instead of skipping them), else Debian's
    /// PostgreSQL 15 when installed.
    package static var binaries: String? {
        if let path = ProcessInfo.processInfo.environment["GAEND_POSTGRES_BIN"], !path.isEmpty { return path }
        let debian = "/usr/lib/postgresql/15/bin"
        return FileManager.default.isExecutableFile(atPath: debian + "/pg_ctl") ? debian : nil
    }

    package static let unavailable = "no PostgreSQL server binaries: install postgresql-15 or set GAEND_POSTGRES_BIN (make check does)"

    package init() throws {
        guard let binaries = Self.binaries else { throw ToolRunnerError(message: Self.unavailable) }
        for tool in ["initdb", "pg_ctl", "postgres"] where !FileManager.default.isExecutableFile(atPath: binaries + "/" + tool) {
            throw ToolRunnerError(message: "GAEND_POSTGRES_BIN: \(binaries)/\(tool) is not an executable")
        }
        let directory = FileManager.default.temporaryDirectory.path + "/gaend-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        // From here on, whatever happens to the runner, the watchdog removes what is left.
        let watchdog: pid_t
        do {
            watchdog = try Self.watch(runner: getpid(), directory: directory)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        do {
            (port, postmaster) = try Self.start(binaries, in: directory)
        } catch {
            Self.tearDown(binaries, directory: directory, postmaster: Self.postmasterPID(directory), watchdog: watchdog)
            throw error
        }
        self.binaries = binaries
        self.directory = directory
        self.watchdog = watchdog
    }

    /// initdb, then pg_ctl start on a free port; returns the port and the server's PID.
    static func start(_ binaries: String, in directory: String) throws -> (port: Int, pid: pid_t) {
        // initdb refuses to run as root: as root, the server runs as postgres, which must own the directory.
        if getuid() == 0 {
            guard let account = getpwnam("postgres") else { throw ToolRunnerError(message: "running as root, but there is no user postgres to run the server") }
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        let log = directory + "/commands.log"
        guard try run(binaries + "/initdb", ["-D", directory + "/data", "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"], log: log) == .success
        else {
            throw ToolRunnerError(message: "initdb failed: \(contents(log))")
        }
        // A port that was free a moment ago may be taken by the time the server binds it: try a few.
        for _ in 0..<3 {
            let port = try LoopbackPort.free()
            let options = "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            let exit = try run(
                binaries + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-o", options, "-w", "-t", "60", "start"], log: log)
            if exit == .success, let pid = postmasterPID(directory) { return (port, pid) }
        }
        throw ToolRunnerError(message: "pg_ctl start failed: \(contents(log))\(contents(directory + "/server.log"))")
    }

    /// A URL for the server's database `name` (its `postgres` superuser, no password). Locks
    /// wait at most 20 s, so a test that blocks on one fails rather than hangs.
    package func url(database name: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(name)?options=-c%20lock_timeout%3D20000"
    }

    /// A new, empty database for one test; returns its URL.
    package func makeDatabase() throws -> String {
        let name = "test_" + UUID().uuidString.prefix(13).lowercased().replacingOccurrences(of: "-", with: "")
        try PostgreSQLConnection(url()).execute("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// Ends the server (idempotent): see `tearDown`.
    package func stop() {
        let alreadyStopped = stopped.withLock { done in
            defer { done = true }
            return done
        }
        guard !alreadyStopped else { return }
        Self.tearDown(binaries, directory: directory, postmaster: postmaster, watchdog: watchdog)
    }

    /// `pg_ctl stop -m fast` (clients are disconnected, nothing is flushed to disk), then SIGKILL
    /// by PID if the server is still there, then the watchdog and the files.
    static func tearDown(_ binaries: String, directory: String, postmaster: pid_t?, watchdog: pid_t) {
        if let postmaster {
            _ = try? run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "30", "stop"], log: directory + "/commands.log")
            if kill(postmaster, 0) == 0 {
                kill(postmaster, SIGKILL)
                // Not our child (pg_ctl's), so it cannot be waited for: poll until it is gone.
                for _ in 0..<500 where kill(postmaster, 0) == 0 { usleep(10_000) }
            }
        }
        kill(watchdog, SIGKILL)
        _ = SpawnedProgram.wait(watchdog)
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Runs a PostgreSQL program to its end, as the postgres user when we are root, with its
    /// output appended to `log`; returns how it ended (nil if it could not be waited for).
    static func run(_ program: String, _ arguments: [String], log: String) throws -> ChildExit? {
        let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        return SpawnedProgram.wait(try SpawnedProgram.spawn(command, output: .file(log)))
    }

    static func contents(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// The first line of postmaster.pid, which the server writes before pg_ctl -w returns.
    static func postmasterPID(_ directory: String) -> pid_t? {
        (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8))?.split(separator: "\n").first.flatMap { pid_t($0) }
    }

    /// A shell that outlives the runner if it dies: once the runner is gone it ends the server by
    /// the PID in its lock file (SIGQUIT, immediate shutdown), if it got that far, and removes the
    /// directory. `tearDown` kills it first.
    static func watch(runner: pid_t, directory: String) throws -> pid_t {
        try SpawnedProgram.spawn(
            [
                "/bin/sh", "-c",
                """
                while kill -0 \(runner) 2>/dev/null; do sleep 1; done
                if [ -f '\(directory)/data/postmaster.pid' ]; then
                    pid=$(head -n 1 '\(directory)/data/postmaster.pid')
                    kill -QUIT "$pid" 2>/dev/null
                    while kill -0 "$pid" 2>/dev/null; do sleep 1; done
                fi
                rm -rf '\(directory)'
                """,
            ], output: .file("/dev/null"))
    }
}
