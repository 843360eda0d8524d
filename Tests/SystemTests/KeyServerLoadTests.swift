// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Testing

/// The load benchmark, small: a second process drives gaen-keyserver with requests in flight. It
/// asserts that every request succeeds and every key is exported, not how fast: the full run
/// (`make bench`) prints the figures. A server that stops answering under load (as it did while
/// FlyingFox printed a line per connection into an unread pipe) fails here by the phase limit.
@Suite(.ownThreads, .timeLimit(.minutes(4)))
struct KeyServerLoadTests {
    @Test func publishesAndDownloadsUnderConcurrencyAllSucceed() throws {
        let run = try ToolRunner.run(
            "gaen-bench",
            ["keyserver", "--publishes", "40", "--concurrency", "8", "--index-downloads", "400", "--export-downloads", "8", "--time-limit", "60"],
            limit: 110)
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("publish (30 keys each): 40 in ") && !$0.contains("stopped") })
        #expect(lines.contains { $0.hasPrefix("export of 1,200 keys: ") })
        #expect(lines.contains { $0.hasPrefix("download index.txt: 400 in ") && !$0.contains("stopped") })
        #expect(lines.contains { $0.hasPrefix("download the 1,200-key export: 8 in ") })
    }
}
