// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCrypto
import KeyServer

/// What an export is signed with and how it is filled, for `serve` (its export runs) and `export`:
/// one set of options, so their names, defaults and help cannot drift apart.
struct ExportOptions: ParsableArguments {
    @Option(help: "The export signing key (PEM, P-256).", completion: .file(extensions: ["pem"]))
    var exportKey: String

    @Option(help: "The export signing key's id and version, ID:VERSION.")
    var keyID = "310:v1"

    @Option(help: "The region of the exports.")
    var region = "XX"

    @Option(help: "Pad each export with random keys up to this many.")
    var minimumRecords = 0

    @Option(help: "Pad up to this many more, a random number each time (the reference's EXPORT_FILE_PADDING_RANGE).")
    var paddingRange = 0

    @Option(help: "Keys a file holds at most; a larger batch is split into several files (the reference's EXPORT_FILE_MAX_RECORDS).")
    var maxKeysPerFile = 500_000

    func validate() throws {
        try checkOption(minimumRecords, in: ExportWorker.Settings.minimumRecordsRange, "--minimum-records", unit: "keys")
        try checkOption(paddingRange, in: ExportWorker.Settings.minimumRecordsRange, "--padding-range", unit: "keys")
        try checkOption(maxKeysPerFile, in: ExportWorker.Settings.maximumKeysPerFileRange, "--max-keys-per-file", unit: "keys")
        _ = try keyIDParts()
    }

    /// The export worker's settings for files also written to `directory` (nil: the database alone).
    func settings(directory: String?) throws -> ExportWorker.Settings {
        let (id, version) = try keyIDParts()
        var settings = ExportWorker.Settings(directory: directory, root: "exposureKeyExport-\(region)", region: region, keyID: id, keyVersion: version)
        settings.minimumRecords = minimumRecords
        settings.paddingRange = paddingRange
        settings.maximumKeysPerFile = maxKeysPerFile
        return settings
    }

    func signingKey() throws -> ECDSAPrivateKey { try privateKey(exportKey, option: "--export-key") }

    private func keyIDParts() throws -> (String, String) {
        let parts = keyID.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw ValidationError("--key-id: '\(keyID)' is not ID:VERSION") }
        return (parts[0], parts[1])
    }
}
