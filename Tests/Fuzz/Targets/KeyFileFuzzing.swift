// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import KeyFiles

/// Downloaded key files: the archive, export.bin and export.sig, read as detection and
/// `gaenctl tools inspect` read them.
enum KeyFileFuzzing {
    /// A real signed sample and the key that signed it (Tests/KeyFilesTests/Fixtures, Apache-2.0),
    /// so that a signature the fuzzer leaves intact reaches the key lookup and the ECDSA check.
    struct Sample: Sendable {
        var exportBinary: [UInt8]
        var policies: [SignaturePolicy]
    }

    static let sample: Sample = {
        let fixtures = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let directory = "/" + fixtures + "/KeyFilesTests/Fixtures/"
        guard let zip = FuzzInput.read(directory + "google-ens-testExport-2-records-1-of-1.zip"),
            let pem = FuzzInput.read(directory + "google-ens-examples-export-public.pem"),
            let archive = try? KeyFileArchive(zip: zip), let export = try? ExportBinary.parse(archive.exportBinary),
            let info = export.signatureInfos.first,
            let key = try? VerificationKey(keyID: info.verificationKeyID, keyVersion: info.verificationKeyVersion, pem: String(decoding: pem, as: UTF8.self))
        else { fatalError("gaend-fuzz: the key file sample under \(directory) cannot be read") }
        return Sample(
            exportBinary: archive.exportBinary,
            policies: [SignaturePolicy(trustedKeys: [key]), SignaturePolicy(trustedKeys: [key], lenient: true)])
    }()

    /// A bare export.bin, read whole as the inspector reads it, and fed to the decoder whole and
    /// in chunks of sizes drawn from the input, which must read the same.
    @Sendable static func exportBinary(_ bytes: [UInt8]) {
        compareChunked(bytes)
        guard let file = try? KeyFile(exportBinary: bytes) else { return }
        read(file)
    }

    /// An archive as detection reads it (the verdict and check, then the keys as streams) and as
    /// the inspector does, under both policies.
    @Sendable static func archive(_ bytes: [UInt8]) {
        for policy in sample.policies {
            guard let judged = try? JudgedKeyFile(archive: ArchiveBytes(bytes), policy: policy) else { continue }
            _ = judged.verdict.description
            _ = try? judged.check()
            for revised in [false, true] {
                guard let keys = try? judged.keys(revised: revised) else { continue }
                while let key = try? keys.next() { _ = key.key.intervals }
                _ = keys.dropped.map(\.reason)
            }
        }
        guard let file = try? KeyFile(zip: bytes, policy: sample.policies[0]) else { return }
        read(file)
    }

    /// export.bin's one decoder must not depend on where its input is cut: a zip entry reaches it
    /// a window at a time, a file in memory whole. The same header, counts, check, keys, dropped
    /// reasons and errors, fed whole and in chunks of 1 to 64 bytes (now and then 64 KiB), their
    /// sizes drawn from a hash of the input, so that a finding replays.
    static func compareChunked(_ bytes: [UInt8]) {
        var seed: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
        var sizes = SplitMix64(seed: seed)
        let whole = ExportBinary.transcript { ExportInput(bytes) }
        let chunked = ExportBinary.transcript {
            ExportInput(bytes) { sizes.next() % 16 == 0 ? 65_536 : Int(sizes.next() % 64) + 1 }
        }
        if whole != chunked { fatalError("gaend-fuzz: the decoder reads export.bin otherwise in chunks: whole \(whole), chunked \(chunked)") }
    }

    /// export.sig beside the sample's export.bin, whose signature infos it must match.
    @Sendable static func signature(_ bytes: [UInt8]) {
        guard let export = try? ExportBinary.parse(sample.exportBinary) else { return }
        for policy in sample.policies {
            let verdict = policy.verdict(exportBinary: sample.exportBinary, exportSignature: bytes, export: export)
            _ = verdict.reason
        }
    }

    /// What the inspector prints and what matching asks of each key (its intervals and day).
    static func read(_ file: KeyFile) {
        _ = file.verdict.description
        for key in file.export.keys + file.export.revisedKeys {
            _ = key.key.intervals
            _ = key.key.utcDay
        }
        _ = file.export.dropped.map(\.reason)
    }
}
