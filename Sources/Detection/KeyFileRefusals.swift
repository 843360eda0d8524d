// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import KeyFiles

/// The key files of a run that were not matched, and why (issue 46). Their keys were never
/// compared with the contact log, so a run that refused a file has not checked everything: the
/// owner is told so by name wherever the answer is shown, and the files are not marked processed,
/// so that the next run tries them again (a trusted key fixed or added then matches them).
package struct KeyFileRefusals: Sendable, Equatable, CustomStringConvertible {
    /// The refused files, in the run's order.
    package var refused: [KeyFileOutcome]
    /// Every file of the run, refused or not.
    package var total: Int

    /// Nil when every file verified. A file of an incomplete batch is refused too (its verdict
    /// says so): its keys were not checked.
    package init?(_ files: [KeyFileOutcome]) {
        let refused = files.filter { !$0.verdict.isVerified }
        guard !refused.isEmpty else { return nil }
        self.refused = refused
        total = files.count
    }

    /// How many files are named in the one-line summary before "and N more".
    static let namedInSummary = 3

    /// "2 of 5 key files refused: bad-signature (US/1.zip), unknown-key (US/2.zip); their keys were
    /// not checked". Names come from the key server's index: escaped (`OutsideText`).
    package var description: String {
        let named = refused.prefix(Self.namedInSummary).map { "\($0.verdict.name) (\(OutsideText.escaped($0.name)))" }
        let more = refused.count > Self.namedInSummary ? " and \(refused.count - Self.namedInSummary) more" : ""
        let files = total == 1 ? "key file" : "key files"
        return "\(refused.count) of \(total) \(files) refused: \(named.joined(separator: ", "))\(more); their keys were not checked"
    }
}
