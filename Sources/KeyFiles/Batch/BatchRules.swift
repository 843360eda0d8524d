// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// Google's checks of one file's batch fields (`SignatureVerifier.verify` in
/// exposure-notifications-internals, after the signature). Google judges export.bin's fields; the
/// copies of batch_num and batch_size in export.sig are not read.
extension KeyExport {
    /// Google's `signatureMaxAllowedBatchGroupSize` (ContactTracingFeature.java).
    static let maximumBatchSize: Int32 = 1_000_000

    /// Why the file's batch fields make it invalid, or nil.
    var batchProblem: String? {
        if batchSize > Self.maximumBatchSize {
            return "\(batchDescription): batch_size is over Google's limit of \(Self.maximumBatchSize)"
        }
        // Without batch_size the file is a batch of its own, whatever batch_num says.
        guard hasBatchSize else { return nil }
        guard hasBatchNumber else { return "\(batchDescription): export.bin has batch_size but no batch_num" }
        if batchNumber < 1 { return "\(batchDescription): batch_num must be 1 or more" }
        if batchNumber > batchSize { return "\(batchDescription): batch_num is greater than batch_size" }
        return nil
    }

    /// `batch 1 of 2 (2020-05-20T00:00:00Z to 2020-05-21T00:00:00Z, US)`: the fields Google names a
    /// file's batch by.
    var batchDescription: String {
        func time(_ seconds: UInt64) -> String { UnixTime(exactlySeconds: seconds).map(ISO8601.format) ?? "\(seconds) s" }
        let number = hasBatchNumber ? "\(batchNumber)" : "(no batch_num)"
        let size = hasBatchSize ? "\(batchSize)" : "(no batch_size)"
        let region = self.region.isEmpty ? "" : ", \(self.region)"
        return "batch \(number) of \(size) (\(time(startTimestamp)) to \(time(endTimestamp))\(region))"
    }
}
