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
