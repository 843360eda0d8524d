// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Storage
import Testing

@Suite(.ownThreads) struct StorageTests {
    @Test func crc32cCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }

    @Test func atomicWriteReplacesWithMode0600AndLeavesNoTemporaryFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/state"
        try AtomicFile.write([1, 2, 3], to: path)
        #expect(try AtomicFile.read(path, limit: 100) == [1, 2, 3])
        #expect(try AtomicFile.mode(of: path) == 0o600)
        try AtomicFile.write([4, 5], to: path)
        #expect(try AtomicFile.read(path, limit: 100) == [4, 5])
        #expect(try directory.entries() == ["state"])
    }

    @Test func createMakesAFileOnceAndLeavesAnExistingOneAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/key"
        #expect(try AtomicFile.create([1, 2], at: path))
        #expect(try AtomicFile.mode(of: path) == 0o600)
        #expect(try !AtomicFile.create([3], at: path))
        #expect(try AtomicFile.read(path, limit: 10) == [1, 2])
        #expect(try directory.entries() == ["key"])
    }

    @Test func leftoverTemporaryFileOfACrashedWriterIsReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/state"
        let leftover = directory.path + "/.state.tmp-\(ProcessInfo.processInfo.processIdentifier)"
        try Data([9, 9, 9, 9]).write(to: URL(fileURLWithPath: leftover))
        try AtomicFile.write([7], to: path)
        #expect(try AtomicFile.read(path, limit: 10) == [7])
        #expect(try directory.entries() == ["state"])
    }

    @Test func readingMissingOrOversizedFiles() throws {
        let directory = try TemporaryDirectory()
        #expect(try AtomicFile.read(directory.path + "/absent", limit: 10) == nil)
        try AtomicFile.write([UInt8](repeating: 0, count: 11), to: directory.path + "/big")
        #expect(throws: FileSystemError.self) { try AtomicFile.read(directory.path + "/big", limit: 10) }
    }

    @Test func writingIntoAMissingDirectoryNamesThePath() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/missing/state"
        let error = try #require(throws: FileSystemError.self) { try AtomicFile.write([1], to: path) }
        #expect(error.isNotFound)
        #expect(error.description.contains(directory.path + "/missing"))
    }

    @Test func dataDirectoryIsCreated0700WithParents() throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/var/lib/gaend/")
        #expect(data.path == directory.path + "/var/lib/gaend")
        #expect(try !data.exists())
        #expect(try data.prepare() == false)
        #expect(try data.exists())
        #expect(try AtomicFile.mode(of: data.path) == 0o700)
        #expect(try AtomicFile.mode(of: directory.path + "/var/lib") == 0o755)
    }

    @Test func openDataDirectoryIsTightened() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/data"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        #expect(try DataDirectory(path: path).prepare() == true)
        #expect(try AtomicFile.mode(of: path) == 0o700)
    }

    @Test func aFileWhereTheDirectoryShouldBeIsRefused() throws {
        let directory = try TemporaryDirectory()
        try AtomicFile.write([1], to: directory.path + "/data")
        #expect(throws: FileSystemError.self) { try DataDirectory(path: directory.path + "/data").prepare() }
    }
}

@Suite(.ownThreads) struct CRC32CTests {
    /// The bit-at-a-time definition, to hold the sliced version against.
    static func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    @Test func slicedEqualsBitwiseForEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<8 {
            for end in start...bytes.count {
                let slice = Array(bytes[start..<end])
                #expect(CRC32C.checksum(bytes[start..<end]) == Self.reference(slice))
            }
        }
    }

    @Test func knownValues() {
        // RFC 3720 B.4: 32 bytes of zeros, and 32 bytes of 0xFF.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    }
}
