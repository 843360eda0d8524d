// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// Downloads that are not zip archives, lie about where their parts are or end mid-stream, found by
/// the key-zip fuzz target: ZIPFoundation 0.9.20's reader kept a copy of every in-memory body it
/// refused, trapped on an offset past the end, and waited for ever on a deflate stream cut short
/// (Sources/KeyFiles/Archive/ZipDirectory.swift reads key files now).
@Suite(.ownThreads) struct ArchiveRefusalTests {
    /// `size` bytes ending with an end-of-central-directory record whose comment length (65,535)
    /// runs past the end: ZIPFoundation finds the record at once and then cannot read it.
    static func truncatedComment(size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0x41, count: size - 22)
        bytes += [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 16) + [0xFF, 0xFF]
        return bytes
    }

    @Test func aBodyWithoutAReadableEndOfCentralDirectoryIsRefusedByName() {
        for body in [Array("<html><body>503 Service Unavailable</body></html>".utf8), Self.truncatedComment(size: 100), []] {
            #expect(throws: KeyFileError.archive("not a zip archive (no end of central directory record)")) { try KeyFileArchive(zip: body) }
        }
    }

    /// 48 refusals of a 16 MiB body kept 768 MiB before the fix (the memory file ZIPFoundation
    /// opens for the copy is never closed when its scan fails). The margin is wide because other
    /// suites allocate in the same process meanwhile.
    @Test func refusedBodiesAreNotKept() throws {
        let body = Self.truncatedComment(size: KeyFileLimits.maximumArchiveBytes)
        let before = try Self.residentBytes()
        for _ in 0..<48 {
            #expect(throws: KeyFileError.self) { try KeyFileArchive(zip: body) }
        }
        let grown = try Self.residentBytes() - before
        #expect(grown < 384 << 20, "resident memory grew by \(grown >> 20) MiB")
    }

    /// A real archive whose end record puts the central directory at `offset`: the daemon must
    /// refuse it, not die (the read past the end trapped in ZIPFoundation's memory file).
    static func centralDirectory(at offset: UInt32) throws -> [UInt8] {
        var bytes = try Samples.fixture("google-ens-testExport-2-records-1-of-1.zip")
        let field = bytes.count - 22 + 16
        for index in 0..<4 { bytes[field + index] = UInt8(truncatingIfNeeded: offset >> (8 * UInt32(index))) }
        return bytes
    }

    @Test func anArchiveThatPointsPastItsEndIsRefused() async {
        await #expect(processExitsWith: .success) {
            let bytes = try ArchiveRefusalTests.centralDirectory(at: 0xFFFF_0000)
            #expect(throws: KeyFileError.self) { try KeyFileArchive(zip: bytes) }
        }
    }

    /// A real archive whose export.bin data starts with a stored deflate block of 65,535 bytes, far
    /// more than the file holds: the stream is cut short.
    static func deflateCutShort() throws -> [UInt8] {
        var bytes = try Samples.fixture("google-ens-testExport-2-records-1-of-1.zip")
        let nameLength = Int(bytes[26]) | Int(bytes[27]) << 8
        let extraLength = Int(bytes[28]) | Int(bytes[29]) << 8
        try #require(String(decoding: bytes[30..<(30 + nameLength)], as: UTF8.self) == "export.bin")
        let data = 30 + nameLength + extraLength
        bytes.replaceSubrange(data..<(data + 5), with: [0x00, 0xFF, 0xFF, 0x00, 0x00])
        return bytes
    }

    /// ZIPFoundation's inflate asked its file for more until the stream ended, and at the end of
    /// the file got nothing, for ever: the child is given 20 s (an alarm ends it) where it needs
    /// milliseconds.
    @Test func aDeflateStreamCutShortIsRefusedNotAwaitedForever() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let bytes = try ArchiveRefusalTests.deflateCutShort()
            #expect(throws: KeyFileError.self) { try KeyFileArchive(zip: bytes) }
        }
    }

    /// Resident set size from /proc/self/statm (pages).
    static func residentBytes() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return try #require(Int(fields[1])) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
