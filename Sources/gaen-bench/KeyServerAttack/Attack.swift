// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch

/// One attack's outcome: the statuses its requests were answered with, against those expected.
struct AttackOutcome: Sendable {
    var name: String
    var statuses: [Int: Int]
    /// Every status must be one of these.
    var expected: Set<Int>
    /// Anything else the attack checked, true if it held.
    var checks: [String: Bool] = [:]

    var passed: Bool { !statuses.isEmpty && Set(statuses.keys).isSubset(of: expected) && checks.values.allSatisfy { $0 } }

    init(_ name: String, statuses: [Int], expected: Set<Int>) {
        self.name = name
        self.statuses = Dictionary(statuses.map { ($0, 1) }, uniquingKeysWith: +)
        self.expected = expected
    }

    var line: String {
        let counts = statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key == 0 ? "no answer" : String($0.key))" }.joined(separator: ", ")
        let extra = checks.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value ? "yes" : "NO")" }.joined(separator: "; ")
        return "\(passed ? "ok  " : "FAIL") \(name): \(counts.isEmpty ? "no response" : counts)\(extra.isEmpty ? "" : "; " + extra)"
    }
}

/// Runs blocking attack code on a thread of its own, never on the concurrency pool's.
func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}
