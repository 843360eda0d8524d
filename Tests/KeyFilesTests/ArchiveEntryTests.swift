// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import KeyFiles
import Testing

/// An archive holds export.bin and export.sig and nothing else, as Google's
/// ProvideDiagnosisKeys.unzip requires.
@Suite(.ownThreads) struct ArchiveEntryTests {
    let binary = ExportBinary.header

    @Test func anyOtherEntryIsRefusedByName() {
        for (extra, position) in [("content.sig", 2), ("README", 0), ("export.bin.bak", 1), ("keys/", 2), ("EXPORT.BIN", 2)] {
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

    @Test func theTwoEntriesAloneAreRead() throws {
        let archive = try KeyFileArchive(zip: KeyFileWriter.zip([("export.sig", [9]), ("export.bin", binary)]))
        #expect(archive.exportBinary == binary)
        #expect(archive.exportSignature == [9])
    }
}
