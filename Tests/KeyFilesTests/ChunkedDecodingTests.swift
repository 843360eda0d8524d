// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import GaendTestSupport
import KeyFiles
import Testing

/// export.bin has one decoder, fed a whole buffer (tools) or a zip entry a window at a time
/// (detection): where its input is cut must never change what it reads.
@Suite(.ownThreads) struct ChunkedDecodingTests {
    static let fixtures = [
        "cwa-android-test-keys.bin.zip", "google-en-android-sample_diagnosis_key_file-2020-05.zip",
        "google-en-android-sample_diagnosis_key_file-2020-07.zip", "google-ens-1605818700-1605819000-0001-ff23e2-unsigned.zip",
        "google-ens-sample-export.zip", "google-ens-testExport-2-records-1-of-1-2020-05-20.zip", "google-ens-testExport-2-records-1-of-1.zip",
    ]

    /// The transcript of `bytes` read whole, which must be that of 1-byte and 7-byte chunks and of
    /// the same bytes zipped and inflated from their entry.
    static func readsAlikeHoweverCut(_ bytes: [UInt8], _ comment: Comment) throws -> String {
        let whole = ExportBinary.transcript { ExportInput(bytes) }
        #expect(ExportBinary.transcript { ExportInput(bytes) { 1 } } == whole, comment)
        #expect(ExportBinary.transcript { ExportInput(bytes) { 7 } } == whole, comment)
        let zip = KeyFileWriter.zip([("export.bin", bytes), ("export.sig", [])])
        let entries = try KeyFileEntries(archive: ArchiveBytes(zip))
        #expect(ExportBinary.transcript { () throws(KeyFileError) in try entries.exportInput() } == whole, comment)
        return whole
    }

    @Test func theRealFilesReadAlikeHoweverCut() throws {
        var binaries = [("google-en-internals-cpp-testdata-export.bin", try Samples.fixture("google-en-internals-cpp-testdata-export.bin"))]
        for name in Self.fixtures { binaries.append((name, try Samples.pair(try Samples.fixture(name)).binary)) }
        for (name, binary) in binaries {
            let whole = try Self.readsAlikeHoweverCut(binary, "\(name)")
            // Each has keys, and none fails.
            let export = try ExportBinary.parse(binary)
            #expect(!export.keys.isEmpty, "\(name)")
            #expect(whole.contains("\(export.keys)"), "\(name)")
        }
    }

    /// Every way the format or a limit can break, each at every cut: the same error, at the same
    /// point, with the same keys read before it.
    @Test func brokenFilesFailAlikeHoweverCut() throws {
        let sample = try Samples.pair(try Samples.fixture("google-ens-testExport-2-records-1-of-1.zip")).binary
        let header = ExportBinary.header
        let key = HostileExport.key(
            DiagnosisKey(key: try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_700_000))))
        let dropped = [UInt8](repeatElement([UInt8(0x3A), 0], count: KeyFileLimits.maximumDroppedReasons + 5).joined())
        func group(depth: Int) -> [UInt8] {
            [UInt8](repeating: 0x7B, count: depth) + [UInt8](repeating: 0x7C, count: depth)  // field 15, start and end groups
        }
        let cases: [(String, [UInt8], String?)] = [
            ("short header", Array(header.prefix(15)), "\(KeyFileError.badHeader)"),
            ("wrong header", Array("EK Export v2    ".utf8) + key, "\(KeyFileError.badHeader)"),
            ("region over the limit", header + HostileExport.field(3, [UInt8](repeating: 0x41, count: 1025)), "region is 1025 bytes, over the limit of 1024"),
            ("region over the limit, cut short", header + [0x1A] + HostileExport.varint(5000) + [0x41], "truncated"),
            ("region not UTF-8", header + HostileExport.field(3, [0xFF]), "region is not UTF-8"),
            ("a key over 64 KiB", header + key + HostileExport.field(7, [UInt8](repeating: 0, count: 70_000)), "key 1 is a message of 70000 bytes"),
            ("a revised key over 64 KiB, cut short", header + [0x42] + HostileExport.varint(70_000) + [0], "truncated"),
            ("101 signature infos", header + [UInt8](repeatElement([UInt8(0x32), 0], count: 101).joined()), "more than 100 signature infos"),
            ("an unknown field of 300 KB", header + key + HostileExport.padding(300_000) + key, nil),
            ("unknown fields of each wire type", header + [0x78, 0xFF, 0x01, 0x79] + [UInt8](repeating: 1, count: 8) + [0x7D, 1, 2, 3, 4] + key, nil),
            ("groups 99 deep", header + group(depth: 99) + key, nil),
            ("groups 100 deep", header + group(depth: 100) + key, "malformed protobuf"),
            ("a group never ended", header + [0x7B, 0x78, 1], "truncated"),
            ("a group ended by another", header + [0x7B, 0x74], "malformed protobuf"),
            ("an end without a start", header + [0x7C], "truncated"),
            ("wire type 6", header + [0x7E], "malformed protobuf"),
            ("field 0", header + [0x02, 0], "malformed protobuf"),
            ("a varint of 11 bytes", header + [0x20] + [UInt8](repeating: 0xFF, count: 10) + [1], "malformed protobuf"),
            ("a key that does not decode", header + key + [0x3A, 0x02, 0x10, 0xFF] + key, "key 1: malformed protobuf"),
            ("a revised key that does not decode", header + key + [0x42, 0x01, 0x08] + key, "revised key 0: truncated"),
            ("dropped keys past the reasons kept", header + HostileExport.headerFields + dropped + key, nil),
        ]
        for (name, bytes, error) in cases {
            let whole = try Self.readsAlikeHoweverCut(bytes, "\(name)")
            if let error { #expect(whole.contains(error), "\(name): \(whole)") }
        }
        // Cut short anywhere, the sample reads alike in chunks too.
        for end in header.count..<sample.count { _ = try Self.readsAlikeHoweverCut(Array(sample.prefix(end)), "the sample cut at \(end)") }
    }

    /// The key limit stops every reading at the same key, whatever follows (random bytes that keep
    /// the zipped entry under the compression ratio limit).
    @Test func theKeyLimitStopsEveryReadingAlike() throws {
        let bytes =
            ExportBinary.header + [UInt8](repeatElement([UInt8(0x3A), 0], count: KeyFileLimits.maximumKeys + 1).joined())
            + HostileExport.padding(100_000)
        let whole = try Self.readsAlikeHoweverCut(bytes, "empty keys over the limit")
        #expect(whole == "\(KeyFileError.tooManyKeys(KeyFileLimits.maximumKeys + 1))")
    }
}
