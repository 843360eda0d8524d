// SPDX-License-Identifier: GPL-3.0-or-later

import Daemon
import OwnerSignals
import Foundation
import GaendTestSupport
import Glibc
import Testing

/// Issue 40, item 12: anyone who can change the hook runs code as gaend. Each of the five ways the
/// issue found (world-writable, group-writable, another owner, a link to a writable file, a
/// world-writable directory) is refused naming the path and why; a hook only root or gaend can
/// change is taken, also under /tmp, whose sticky bit keeps others from replacing root's entries.
@Suite(.ownThreads) struct HookPathCheckTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        chmod(directory.path, 0o755)
    }

    @Test func aHookOnlyRootOrGaendCanChangeIsTaken() throws {
        let hook = try directory.writeScript("hook", "exit 0")
        chmod(hook, 0o755)
        #expect(HookPathCheck.problem(with: hook) == nil, "\(HookPathCheck.problem(with: hook) ?? "")")
        // A link to it, from a directory only root can write, is the same hook.
        let link = directory.path + "/link"
        symlink(hook, link)
        #expect(HookPathCheck.problem(with: link) == nil)
    }

    @Test func aWorldOrGroupWritableHookIsRefused() throws {
        let hook = try directory.writeScript("hook", "exit 0")
        chmod(hook, 0o777)
        #expect(HookPathCheck.problem(with: hook)?.contains("\(hook) (the hook) is writable by anyone (mode 777)") == true)
        chmod(hook, 0o775)
        #expect(HookPathCheck.problem(with: hook)?.contains("writable by its group (mode 775)") == true)
    }

    @Test func aHookOwnedByAnotherUserIsRefused() throws {
        guard geteuid() == 0 else {
            print("skipped: giving a file to another user needs root")
            return
        }
        let hook = try directory.writeScript("hook", "exit 0")
        chmod(hook, 0o755)
        chown(hook, 65534, 65534)
        #expect(HookPathCheck.problem(with: hook)?.contains("owned by uid 65534") == true)
    }

    @Test func aLinkToAWritableFileIsRefused() throws {
        let target = try directory.writeScript("target", "exit 0")
        chmod(target, 0o777)
        let link = directory.path + "/link"
        symlink(target, link)
        #expect(HookPathCheck.problem(with: link)?.contains("\(target) (the hook) is writable by anyone") == true)
    }

    @Test func aHookInAWorldWritableDirectoryIsRefused() throws {
        let open = directory.path + "/open"
        mkdir(open, 0o777)
        chmod(open, 0o777)
        let hook = open + "/hook"
        _ = try directory.writeScript("open/hook", "exit 0")
        chmod(hook, 0o755)
        #expect(HookPathCheck.problem(with: hook)?.contains("\(open) (a directory above the hook) is writable by anyone (mode 777)") == true)
        // With the sticky bit, as /tmp: others still cannot replace root's entries.
        chmod(open, 0o1777)
        #expect(HookPathCheck.problem(with: hook) == nil)
    }

    @Test func aRelativeOrMissingHookIsRefused() {
        #expect(HookPathCheck.problem(with: "hook.sh")?.contains("not an absolute path") == true)
        #expect(HookPathCheck.problem(with: directory.path + "/missing")?.contains("does not exist") == true)
    }
}
