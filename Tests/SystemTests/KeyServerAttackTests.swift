// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Testing

/// The attack suite (`gaen-bench keyserver-attack`, the full figures are in `make bench`), small:
/// 50 MB bodies declared and chunked, a 10,000-line header, a request smuggled after a refused
/// body, paths out of the export directory, 300 wrong codes from one client, forged, expired,
/// unsigned and HS256 certificates and tokens, and 50 slow clients, all at once while a normal
/// client shares keys. It asserts each attack's statuses, that the normal client never failed
/// and that only its keys were stored; not how fast anything was.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct KeyServerAttackTests {
    @Test func everyAttackIsAnsweredAndTheNormalClientIsServed() throws {
        let run = try ToolRunner.run("gaen-bench", ["keyserver-attack", "--slow-clients", "50", "--request-timeout", "2", "--wrong-codes", "300"], limit: 100)
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("FAIL") }, "\(run.standardOutput)")
        #expect(lines.filter { $0.hasPrefix("ok ") }.count == 14, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("ok   300 wrong codes from one client: 30 × 400, 270 × 429") }, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("ok   50 slow clients: 50 × 408") }, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("normal client during the attacks: ") && $0.contains(", 0 failed, ") }, "\(run.standardOutput)")
    }
}
