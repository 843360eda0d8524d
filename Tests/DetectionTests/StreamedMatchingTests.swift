// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Detection
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// Detection reads a file's keys as a stream, a round at a time: what it finds must not depend on
/// where the rounds fall, and a file that does not verify is judged without its keys being read.
@Suite(.ownThreads) struct StreamedMatchingTests {
    let wearer: WearerFixture
    let now = UnixTime.vectorDay.adding(seconds: 2 * 86_400 + 12 * 3600)

    init() throws { wearer = try WearerFixture() }

    var policy: SignaturePolicy {
        get throws { SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: wearer.signing.publicKeyPEM)]) }
    }

    func run(_ files: [(name: String, bytes: [UInt8])], parallelism: Int) async throws -> DetectionRun {
        let pipeline = DetectionPipeline(reader: ContactLogReader(dataDirectory: wearer.data), policy: try policy, parallelism: parallelism)
        return try await pipeline.run(files: files, configuration: WearerFixture.configuration, now: now)
    }

    /// 8,191 strangers sort before the heard key, so its two copies are keys 8,191 and 8,192: with
    /// one task they fall in two rounds, with four in one. Both copies are matched (the second then
    /// revises the first, as when the file was matched whole), whatever the rounds.
    @Test func aKeysCopiesOnBothSidesOfARoundAreMatchedAsInOne() async throws {
        try await wearer.plantSightings()
        let strangers = (0..<8191).map { index in
            WearerFixture.key(Bytes16([0, 0] + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init) + [UInt8](repeating: 7, count: 10))!)
        }
        let writer = KeyFileWriter(signingKey: wearer.signing, keyID: "310", keyVersion: "v1")
        let heard = WearerFixture.key(WearerFixture.heard, .selfReport)
        let zip = try writer.archive(
            KeyExport(region: "US", keys: strangers + [heard, heard], revisedKeys: [WearerFixture.key(WearerFixture.heard, .confirmedTest)]))
        let order = try KeyFile(zip: zip, policy: try policy).export.keys
        #expect(order[8191] == heard && order[8192] == heard)
        let rounds = try await run([("1.zip", zip)], parallelism: 1)
        let whole = try await run([("1.zip", zip)], parallelism: 4)
        for run in [rounds, whole] {
            #expect(run.result.files.map(\.keys) == [8193])
            #expect(run.result.statistics.keys == 8193)
            #expect(run.result.statistics.newResults == 1)
            #expect(run.result.statistics.keysWithStoredResult == 0)
            #expect(run.result.windows.count == 1)
            #expect(run.results.results.map(\.match.key.reportType) == [.confirmedTest])
        }
        #expect(rounds.result.statistics.revisions == whole.result.statistics.revisions)
        #expect(rounds.result.statistics.rpisDerived == whole.result.statistics.rpisDerived)
    }

    /// A file signed by another key is reported with its verdict and no keys: its keys are not
    /// read, so even undecodable ones do not make it fail otherwise.
    @Test func aFileThatDoesNotVerifyIsNotRead() async throws {
        try await wearer.plantSightings()
        let impostor = KeyFileWriter(signingKey: try ECDSAPrivateKey(), keyID: "310", keyVersion: "v1")
        var binary = impostor.exportBinary(KeyExport(region: "US", keys: [WearerFixture.key()]))
        binary += [0x3A, 0x02, 0x10, 0xFF]  // a key whose varint is cut short
        let zip = KeyFileWriter.zip([("export.bin", binary), ("export.sig", try impostor.exportSignature(for: binary))])
        let forged = try await run([("forged.zip", zip)], parallelism: 1)
        #expect(forged.result.files.map(\.verdict.name) == ["bad-signature"])
        #expect(forged.result.files.map(\.keys) == [0])
        #expect(forged.result.statistics.keys == 0 && forged.result.windows.isEmpty)
        // Signed by the trusted key, the same bytes are refused whole before anything is matched.
        let writer = KeyFileWriter(signingKey: wearer.signing, keyID: "310", keyVersion: "v1")
        let signed = KeyFileWriter.zip([("export.bin", binary), ("export.sig", try writer.exportSignature(for: binary))])
        let refused = try await run([("broken.zip", signed)], parallelism: 1)
        #expect(refused.result.files.map(\.verdict.name) == ["invalid"])
        #expect(refused.result.files.first?.verdict.reason == "malformed: export.bin: key 1: malformed protobuf")
        #expect(refused.result.statistics.keys == 0 && refused.result.windows.isEmpty)
    }
}
