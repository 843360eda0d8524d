// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto

/// A key file read and judged: its contents and the signature verdict. What the inspector prints,
/// with every key in `export` (detection reads keys as streams instead: `JudgedKeyFile`).
package struct KeyFile: Sendable {
    package var export: KeyExport
    package var verdict: Verdict
    /// Known app signatures the archive carried beside the export pair, not read (`KeyFileArchive`).
    package var ignoredEntries: [String] = []

    /// Reads a zip archive and checks it against `policy`: the header fields and the signature over
    /// export.bin's raw bytes, then the keys.
    package init(zip bytes: [UInt8], policy: SignaturePolicy) throws(KeyFileError) {
        let judged = try JudgedKeyFile(zip: bytes, policy: policy)
        verdict = judged.verdict
        ignoredEntries = judged.ignoredEntries
        export = try judged.export()
    }

    /// Reads a bare export.bin (no signature can come with it: the verdict is `unsigned`).
    package init(exportBinary bytes: [UInt8]) throws(KeyFileError) {
        export = try ExportBinary.parse(bytes)
        verdict = .unsigned
    }
}

/// A key file judged before any of its keys is used, as detection and the tools read it, from its
/// archive's bytes in memory or on disk, never holding the archive or export.bin whole: the
/// entries judged under their limits, export.sig read (it says which digests of export.bin its
/// signatures need, `SignaturePolicy.plan`), then export.bin inflated and decoded once for its
/// header fields, its key messages counted under the key limit and validated, and those digests
/// (`ExportSummary`). Its keys are read again, as streams, only when asked (detection asks only for
/// verified files).
package struct JudgedKeyFile: Sendable {
    package var verdict: Verdict
    package let entries: KeyFileEntries
    private let summary: ExportSummary

    package init(archive: ArchiveBytes, policy: SignaturePolicy) throws(KeyFileError) {
        entries = try KeyFileEntries(archive: archive)
        let plan = policy.plan(exportSignature: try entries.exportSignature())
        var streams = [DigestStream]()
        for digest in plan.digests {
            do {
                streams.append(try DigestStream(digest))
            } catch {
                throw .archive("cannot hash export.bin: \(error)")
            }
        }
        summary = try ExportSummary(
            reading: entries.exportInput { bytes in
                for stream in streams { stream.update(bytes) }
            })
        var hashes = [ECDSADigest: [UInt8]]()
        for stream in streams { hashes[stream.digest] = stream.finish() }
        verdict = policy.verdict(plan, hashes: hashes, export: summary.header)
    }

    /// An archive in memory, refused over the archive limit.
    package init(zip bytes: [UInt8], policy: SignaturePolicy) throws(KeyFileError) {
        try self.init(archive: ArchiveBytes.checked(bytes), policy: policy)
    }

    /// The header fields, no keys.
    package var header: KeyExport { summary.header }
    /// Key messages (keys and revised keys), valid or not.
    package var keyMessages: Int { summary.keyMessages }
    package var revisedKeyMessages: Int { summary.revisedKeyMessages }
    /// Known app signatures the archive carried beside the export pair, not read.
    package var ignoredEntries: [String] { entries.ignoredEntries }

    /// Every key and revised key validated, none kept: how many are valid, and how many dropped.
    /// Found while export.bin was read for its verdict (nothing of a key is used before), so a file
    /// is inflated once for its verdict and its check.
    package func check() throws(KeyFileError) -> (keys: Int, revisedKeys: Int, dropped: Int) {
        try summary.check()
    }

    /// The keys (or revised keys), export.bin inflated again and read one key at a time.
    package func keys(revised: Bool = false) throws(KeyFileError) -> KeyStream {
        try KeyStream(entries, revised: revised)
    }

    /// The whole export, keys in arrays, export.bin inflated again: for tools, which show a file whole.
    package func export() throws(KeyFileError) -> KeyExport {
        try ExportBinary.read(entries.exportInput())
    }
}
