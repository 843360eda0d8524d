// SPDX-License-Identifier: GPL-3.0-or-later

/// A key file read and judged: its contents and the signature verdict. What the inspector prints
/// and what detection consumes (only when `verdict.isVerified`).
public struct KeyFile: Sendable {
    public var export: KeyExport
    public var verdict: Verdict

    /// Reads a zip archive and checks it against `policy`.
    public init(zip bytes: [UInt8], policy: SignaturePolicy) throws(KeyFileError) {
        let archive = try KeyFileArchive(zip: bytes)
        export = try ExportBinary.parse(archive.exportBinary)
        verdict = policy.verdict(exportBinary: archive.exportBinary, exportSignature: archive.exportSignature, export: export)
    }

    /// Reads a bare export.bin (no signature can come with it: the verdict is `unsigned`).
    public init(exportBinary bytes: [UInt8]) throws(KeyFileError) {
        export = try ExportBinary.parse(bytes)
        verdict = .unsigned
    }
}
