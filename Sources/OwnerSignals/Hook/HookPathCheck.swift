// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// Whether a hook program may be trusted to run as gaend, as sshd's StrictModes judges a user's
/// files (issue 40, item 12: a world- or group-writable hook, one owned by another user, a symlink
/// to a writable file and a hook in a world-writable directory all ran without a word).
///
/// The program's path and the path its symbolic links lead to are checked: the file and every
/// directory above it must be owned by root or by gaend's own user and writable by no one else. A
/// world-writable directory with the sticky bit (/tmp) is accepted above an entry owned by root or
/// gaend: in it nobody else can rename or remove that entry (the kernel's rule for sticky
/// directories), so the path below it cannot be changed by anyone but its owner.
package enum HookPathCheck {
    // The mode bits, as numbers (stat(2)): group- and other-writable, sticky.
    private static let groupWritable: mode_t = 0o020
    private static let otherWritable: mode_t = 0o002
    private static let stickyBit: mode_t = 0o1000

    /// Why `program` may not be run, or nil when it may.
    package static func problem(with program: String, owner: UInt32 = geteuid()) -> String? {
        guard program.hasPrefix("/") else { return "\(program) is not an absolute path" }
        var resolved = [CChar](repeating: 0, count: 4097)
        guard realpath(program, &resolved) != nil else { return "\(program) does not exist (\(String(cString: strerror(errno))))" }
        let target = String(cString: resolved)
        // The path as written (its symbolic links are entries of their directories) and as resolved.
        for path in target == program ? [program] : [program, target] {
            if let problem = problem(alongPath: path, owner: owner) { return problem }
        }
        return nil
    }

    private static func problem(alongPath path: String, owner: uid_t) -> String? {
        var components = path.split(separator: "/").map(String.init)
        var checked = [String]()
        // From the file (or the link) up to the root.
        while !components.isEmpty {
            let current = "/" + components.joined(separator: "/")
            checked.append(current)
            components.removeLast()
        }
        checked.append("/")
        for (depth, current) in checked.enumerated() {
            var status = stat()
            guard lstat(current, &status) == 0 else { return "\(current) cannot be read (\(String(cString: strerror(errno))))" }
            let isLink = status.st_mode & S_IFMT == S_IFLNK
            // A link's own mode means nothing; its owner and its directory decide who can change it.
            if status.st_uid != 0, status.st_uid != owner {
                return "\(current) is owned by uid \(status.st_uid), neither root nor gaend's user: its owner could run code as gaend"
            }
            if isLink { continue }
            let writable = status.st_mode & (groupWritable | otherWritable)
            guard writable != 0 else { continue }
            let sticky = status.st_mode & S_IFMT == S_IFDIR && status.st_mode & stickyBit != 0
            if sticky, depth > 0, stickyChildIsSafe(checked[depth - 1], owner: owner) { continue }
            let mode = String(status.st_mode & 0o7777, radix: 8)
            let who = status.st_mode & otherWritable != 0 ? "anyone" : "its group"
            let what = status.st_mode & S_IFMT == S_IFDIR ? "a directory above the hook" : "the hook"
            return "\(current) (\(what)) is writable by \(who) (mode \(mode)): whoever can write it could run code as gaend"
        }
        return nil
    }

    /// An entry of a sticky directory that only root or gaend's user can rename or remove.
    private static func stickyChildIsSafe(_ child: String, owner: uid_t) -> Bool {
        var status = stat()
        guard lstat(child, &status) == 0 else { return false }
        return status.st_uid == 0 || status.st_uid == owner
    }
}
