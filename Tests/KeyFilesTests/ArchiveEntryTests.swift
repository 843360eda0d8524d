// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import KeyFiles
import Testing

/// An archive holds export.bin and export.sig and nothing else, as Google's
/// ProvideDiagnosisKeys.unzip requires.
@Suite(.ownThreads) struct ArchiveEntryTests {
    let binary = ExportBinary.header

    @Test func anyOtherEntryIsRefusedByName() {
        for (extra, position) in [("README", 0), ("export.bin.bak", 1), ("keys/", 2), ("EXPORT.BIN", 2), ("CONTENT.SIG", 2), ("content.sig/", 2)] {
            var entries: [(name: String, bytes: [UInt8])] = [("export.bin", binary), ("export.sig", [])]
            entries.insert((extra, [1]), at: position)
            #expect(throws: KeyFileError.archive("entry '\(extra)' is neither export.bin nor export.sig (GMS refuses such archives)")) {
                try KeyFileArchive(zip: KeyFileWriter.zip(entries))
            }
        }
    }

    @Test func exportFilesInASubFolderAreNamed() {
        let zip = KeyFileWriter.zip([("keys/export.bin", binary), ("keys/export.sig", [])])
        #expect(
            throws: KeyFileError.archive(
                "entry 'keys/export.bin' is neither export.bin nor export.sig (GMS refuses such archives); the export files are in a sub-folder: keys/export.bin, keys/export.sig"
            )
        ) { try KeyFileArchive(zip: zip) }
    }

    /// The Dutch app's own signature is passed over at the root, and only there, and only once.
    @Test func aKnownAppSignatureAtTheRootIsIgnoredAndNamed() throws {
        let archive = try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary), ("content.sig", [7, 7]), ("export.sig", [9])]))
        #expect(archive.exportBinary == binary)
        #expect(archive.exportSignature == [9])
        #expect(archive.ignoredEntries == ["content.sig"])
        for path in ["nl/content.sig", "../content.sig", "./content.sig"] {
            #expect(throws: KeyFileError.archive("entry '\(path)' is neither export.bin nor export.sig (GMS refuses such archives)"), "\(path)") {
                try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary), ("export.sig", []), (path, [1])]))
            }
        }
        #expect(throws: KeyFileError.archive("two content.sig entries")) {
            try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary), ("content.sig", [1]), ("export.sig", []), ("content.sig", [2])]))
        }
        #expect(throws: KeyFileError.archive("two export.sig entries")) {
            try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary), ("content.sig", [1]), ("export.sig", []), ("export.sig", [2])]))
        }
    }

    @Test func theTwoEntriesAloneAreRead() throws {
        let archive = try KeyFileArchive(zip: KeyFileWriter.zip([("export.sig", [9]), ("export.bin", binary)]))
        #expect(archive.exportBinary == binary)
        #expect(archive.exportSignature == [9])
    }
}
