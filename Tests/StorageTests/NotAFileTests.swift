// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import Storage
import Testing

/// Issue 53, item 7: a FIFO (or any file that is not a regular one) in place of a state file is
/// never read: opening it would block until a writer came, and reading it forever. A state file is
/// set aside as a damaged one is and read as absent; the contact log's files refuse it by name.
@Suite struct NotAFileTests {
    @Test func aFIFOInPlaceOfAStateFileIsSetAsideAndReadAsAbsent() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/owner.json"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(try AtomicFile.read(path, limit: 1 << 20) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("owner.json.not-a-file-") }
        #expect(aside.count == 1)
        // The tail reader too; and the state can be written anew in its place.
        #expect(mkfifo(path, 0o600) == 0)
        #expect(try AtomicFile.readTail(path, limit: 1 << 20) == nil)
        try AtomicFile.write(Array("{}".utf8), to: path)
        #expect(try AtomicFile.read(path, limit: 1 << 20) == Array("{}".utf8))
    }

    @Test func aFIFOInPlaceOfALogFileIsRefusedByName() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/segment"
        #expect(mkfifo(path, 0o600) == 0)
        for mode in [AppendOnlyFile.Mode.readOnly, .append] {
            #expect {
                _ = try AppendOnlyFile(path: path, mode: mode)
            } throws: { error in
                (error as? FileSystemError)?.isNotRegularFile == true || (error as? FileSystemError)?.errno != nil
            }
        }
        #expect(throws: FileSystemError.self) { _ = try AppendOnlyFile(path: directory.path, mode: .readOnly) }
    }
}
