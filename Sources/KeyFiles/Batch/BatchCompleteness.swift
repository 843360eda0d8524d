// SPDX-License-Identifier: GPL-3.0-or-later

/// Files grouped into batches as GMS groups them: same export.bin metadata except batch_num
///
/// Google (`SignatureVerifier.verify` with `enableMultipleWholeBatchSignatureVerification`) refuses
/// a set of files when a batch among them is not whole: files whose export.bin headers are equal
/// but for batch_num (start and end timestamps, region, batch_size, signature infos) form a batch,
/// which is whole when every batch_num from 1 to batch_size is there. A file without batch_size,
/// or with batch_size 1, is a batch of its own. Pure: the caller decides what an incomplete batch
/// costs (Google refuses the whole call).
package enum BatchCompleteness {
    /// For each file whose batch (batch_size > 1) is not complete among `files`, the reason, keyed by file name.
    package static func incomplete(_ files: [(name: String, export: KeyExport)]) -> [String: String] {
        var batches = [Identity: [(name: String, export: KeyExport)]]()
        for file in files where file.export.hasBatchSize && file.export.batchSize > 1 {
            batches[Identity(file.export), default: []].append(file)
        }
        var reasons = [String: String]()
        for members in batches.values {
            let size = members[0].export.batchSize
            // A batch_num outside 1...batch_size is the file's own fault (`batchProblem`) and
            // completes nothing. batch_size is at most Google's limit here or the file is invalid;
            // the count below is bounded by the files given, not by batch_size.
            let present = Set(members.map(\.export.batchNumber).filter { (1...size).contains($0) })
            guard present.count < Int(size) else { continue }
            let missing = Self.missing(present, of: size)
            for member in members {
                reasons[member.name] = "\(member.export.batchDescription): file(s) \(missing) of the batch are missing"
            }
        }
        return reasons
    }

    /// The batch numbers not in `present`, as ranges: "2", "2-5, 9" (a batch may be large).
    static func missing(_ present: Set<Int32>, of size: Int32) -> String {
        var ranges = [String]()
        var start = 1
        // Walks the gaps between the present numbers, so the work is bounded by the files given;
        // in Int, so that batch_size Int32.max + 1 cannot overflow.
        for number in present.map(Int.init).sorted() + [Int(size) + 1] {
            if number > start { ranges.append(number - 1 == start ? "\(start)" : "\(start)-\(number - 1)") }
            start = number + 1
        }
        return ranges.joined(separator: ", ")
    }

    /// Everything in the header but batch_num: what makes two files parts of one batch.
    struct Identity: Hashable {
        var startTimestamp: UInt64
        var endTimestamp: UInt64
        var region: String
        var batchSize: Int32
        var signatureInfos: [SignatureInfo]

        init(_ export: KeyExport) {
            startTimestamp = export.startTimestamp
            endTimestamp = export.endTimestamp
            region = export.region
            batchSize = export.batchSize
            signatureInfos = export.signatureInfos
        }
    }
}
