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

    @Sendable static func exportBinary(_ bytes: [UInt8]) {
        stream(try? ExportReader(bytes))
        guard let file = try? KeyFile(exportBinary: bytes) else { return }
        read(file)
    }

    /// An archive as detection reads it (the verdict, then the keys as a stream) and as the
    /// inspector does, under the strict policy (export-sig tries the lenient one).
    @Sendable static func archive(_ bytes: [UInt8]) {
        if let judged = try? JudgedKeyFile(zip: bytes, policy: sample.policies[0]) {
            _ = judged.verdict.description
            stream(judged.reader)
        }
        for policy in sample.policies { compareStreamed(bytes, policy: policy) }
        guard let file = try? KeyFile(zip: bytes, policy: sample.policies[0]) else { return }
        read(file)
    }

    /// What detection reads (`StreamedKeyFile`, export.bin streamed from the archive) must be what
    /// the file read whole gives: the same verdict, counts and keys, or a refusal both ways.
    static func compareStreamed(_ bytes: [UInt8], policy: SignaturePolicy) {
        func whole() throws -> String {
            let judged = try JudgedKeyFile(zip: bytes, policy: policy)
            guard judged.verdict.isVerified else { return "\(judged.verdict)" }
            let counts = try judged.reader.check()
            var keys = [DiagnosisKey]()
            for revised in [false, true] {
                var stream = judged.reader.keys(revised: revised)
                while let key = try stream.next() { keys.append(key) }
            }
            return "\(judged.verdict) \(counts) \(keys)"
        }
        func streamed() throws -> String {
            let file = try StreamedKeyFile(archive: ArchiveBytes(bytes), policy: policy)
            guard file.verdict.isVerified else { return "\(file.verdict)" }
            let counts = try file.check()
            var keys = [DiagnosisKey]()
            for revised in [false, true] {
                let stream = try ExportStream.keys(file.entries, revised: revised)
                while let key = try stream.next() { keys.append(key) }
            }
            return "\(file.verdict) \(counts) \(keys)"
        }
        let expected = Result { try whole() }
        let found = Result { try streamed() }
        switch (expected, found) {
        case (.success(let a), .success(let b)) where a == b: return
        case (.failure, .failure): return
        default: fatalError("gaend-fuzz: the streamed key file reader disagrees: whole \(expected), streamed \(found)")
        }
    }

    /// Every key and revised key as detection streams them.
    static func stream(_ reader: ExportReader?) {
        guard let reader else { return }
        for revised in [false, true] {
            var keys = reader.keys(revised: revised)
            while let key = try? keys.next() { _ = key.key.intervals }
            _ = keys.dropped.map(\.reason)
        }
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
