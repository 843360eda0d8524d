// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Testing

/// The attack suite (`gaen-bench keyserver-attack`, the full figures are in `make bench`), small:
/// 50 MB bodies declared and chunked, a 10,000-line header, a request smuggled after a refused
/// body, paths out of the export directory, 300 wrong codes from one client, forged, expired,
/// unsigned and HS256 certificates and tokens, 50 slow clients from one address and 1,000 silent
/// sockets from another (issue 47: one address holds at most 32 connections, and a third address
/// is served meanwhile), all at once while a normal client shares keys. It asserts each attack's statuses, that the normal client never failed
/// and that only its keys were stored; not how fast anything was.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerAttackTests {
    @Test func everyAttackIsAnsweredAndTheNormalClientIsServed() throws {
        let run = try ToolRunner.run("gaen-bench", ["keyserver-attack", "--slow-clients", "50", "--request-timeout", "2", "--wrong-codes", "300"], limit: 100)
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("FAIL") }, "\(run.standardOutput)")
        #expect(lines.filter { $0.hasPrefix("ok ") }.count == 15, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("ok   300 wrong codes from one client: 30 × 400, 270 × 429") }, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("ok   50 slow clients: 32 × 408, 18 × 503") }, "\(run.standardOutput)")
        #expect(
            lines.contains {
                $0.hasPrefix("ok   1000 silent sockets from one address: ") && $0.contains("another address served meanwhile: yes")
            }, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("normal client during the attacks: ") && $0.contains(", 0 failed, ") }, "\(run.standardOutput)")
    }
}
