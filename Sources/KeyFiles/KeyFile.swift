// SPDX-License-Identifier: GPL-3.0-or-later

/// A key file read and judged: its contents and the signature verdict. What the inspector prints,
/// with every key in `export` (detection reads keys as a stream instead: `JudgedKeyFile`).
package struct KeyFile: Sendable {
    package var export: KeyExport
    package var verdict: Verdict
    /// Known app signatures the archive carried beside the export pair, not read (`KeyFileArchive`).
    package var ignoredEntries: [String] = []

    /// Reads a zip archive and checks it against `policy`: the header fields, then the signature
    /// over export.bin's raw bytes, then the keys.
    package init(zip bytes: [UInt8], policy: SignaturePolicy) throws(KeyFileError) {
        let judged = try JudgedKeyFile(zip: bytes, policy: policy)
        verdict = judged.verdict
        ignoredEntries = judged.ignoredEntries
        export = try judged.reader.export()
    }

    /// Reads a bare export.bin (no signature can come with it: the verdict is `unsigned`).
    package init(exportBinary bytes: [UInt8]) throws(KeyFileError) {
        export = try ExportReader(bytes).export()
        verdict = .unsigned
    }
}

/// A key file judged before any of its keys is read: the archive under its limits, export.bin's
/// header fields (and its key messages counted, under the key limit), and the signature verdict
/// over export.bin's raw bytes. Detection reads the keys, from `reader`, only when verified.
package struct JudgedKeyFile: Sendable {
    package var verdict: Verdict
    package var reader: ExportReader
    /// Known app signatures the archive carried beside the export pair, not read.
    package var ignoredEntries: [String]
    /// The header fields, no keys.
    package var header: KeyExport { reader.header }

    package init(zip bytes: [UInt8], policy: SignaturePolicy) throws(KeyFileError) {
        let archive = try KeyFileArchive(zip: bytes)
        ignoredEntries = archive.ignoredEntries
        reader = try ExportReader(archive.exportBinary)
        verdict = policy.verdict(exportBinary: archive.exportBinary, exportSignature: archive.exportSignature, export: reader.header)
    }
}

/// A key file judged as detection reads it, from its archive's bytes in memory or on disk, never
/// holding the archive or export.bin whole: the entries judged, export.sig read, then export.bin
/// streamed once for its header fields, its key messages counted and the digests its signatures
/// need (`ExportStream`). Its keys are read again, as streams, only when it verified.
package struct StreamedKeyFile: Sendable {
    package var verdict: Verdict
    /// The header fields, no keys.
    package var header: KeyExport
    /// Key messages (keys and revised keys), valid or not.
    package var keyMessages: Int
    package var revisedKeyMessages: Int
    package let entries: KeyFileEntries
    /// Known app signatures the archive carried beside the export pair, not read.
    package var ignoredEntries: [String] { entries.ignoredEntries }
    private let judged: ExportStream.Judged

    package init(archive: ArchiveBytes, policy: SignaturePolicy) throws(KeyFileError) {
        entries = try KeyFileEntries(archive: archive)
        let plan = policy.plan(exportSignature: try entries.exportSignature())
        judged = try ExportStream.judge(entries, digests: plan.digests)
        header = judged.header
        keyMessages = judged.keyMessages
        revisedKeyMessages = judged.revisedKeyMessages
        verdict = policy.verdict(plan, hashes: judged.hashes, export: judged.header)
    }

    /// Every key and revised key validated, none kept: how many are valid, and how many dropped.
    /// Found while export.bin was read for its verdict (nothing of a key is used before), so a file
    /// is inflated once for its verdict and its check.
    package func check() throws(KeyFileError) -> (keys: Int, revisedKeys: Int, dropped: Int) {
        try judged.check()
    }
}
