// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import ENCrypto
import Foundation
import KeyFiles

/// Writes hostile key files that stay within the archive limits, signed by a key it writes beside
/// them, so that a run of `gaenctl tools match` (the detection pipeline) or `gaenctl tools inspect`
/// on them can be measured under `/usr/bin/time -v`:
///
/// ```sh
/// gaen-bench hostile-keyfile --shape empty-keys --out /tmp/h/empty.zip
/// /usr/bin/time -v gaenctl tools match --data-dir /tmp/h/data --config /tmp/h/config.json \
///     --public-key /tmp/h/empty.pem --key-id 310 --key-version v1 /tmp/h/empty.zip
/// ```
///
/// The files fill export.bin up to the entry limit (32 MiB), with enough random bytes (an unknown
/// field) to keep the entry under the compression ratio limit and the archive under 16 MiB.
struct HostileKeyFileBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile-keyfile",
        abstract: "Write a signed hostile key file within the archive limits (and its public key, config and empty data directory).",
        discussion: """
            Shapes: empty-keys (empty key messages filling the entry, far over the key limit), \
            empty-keys-at-limit (750,000 empty keys, all dropped), valid-keys-at-limit (750,000 valid \
            keys), signature-infos (empty signature infos filling the entry), signatures (a valid \
            signature, then empty ones filling export.sig).
            """)

    enum Shape: String, ExpressibleByArgument, CaseIterable {
        case emptyKeys = "empty-keys"
        case emptyKeysAtLimit = "empty-keys-at-limit"
        case validKeysAtLimit = "valid-keys-at-limit"
        case signatureInfos = "signature-infos"
        case signatures
    }

    @Option(help: "The shape of the file.")
    var shape: Shape

    @Option(help: "The archive to write; the public key is written beside it (.pem), with config.json and data/.")
    var out: String

    @Option(help: "Inflated export.bin bytes (at most the 32 MiB entry limit).")
    var size = KeyFileLimits.maximumEntryBytes - 4096

    @Option(help: "The compression ratio to aim for (the limit is 20).")
    var ratio = 16

    func run() throws {
        let body = Self.body(shape, size: size, ratio: ratio)
        let signing = try ECDSAPrivateKey()
        let writer = KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1")
        let binary = ExportBinary.header + (shape == .signatures ? Self.body(.emptyKeys, size: 4096, ratio: 1_000_000) : body)
        var signature = try writer.exportSignature(for: binary)
        // Empty TEKSignature messages (field 1) after the real one, then the random field.
        if shape == .signatures { signature += body }
        let zip = KeyFileWriter.zip([("export.bin", binary), ("export.sig", signature)])
        let base = out.hasSuffix(".zip") ? String(out.dropLast(4)) : out
        let folder = URL(fileURLWithPath: out).deletingLastPathComponent()
        try Data(zip).write(to: URL(fileURLWithPath: out))
        try Data(signing.publicKeyPEM.utf8).write(to: URL(fileURLWithPath: base + ".pem"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("data"), withIntermediateDirectories: true)
        try Data(#"{"attenuationDurationThresholds": [50, 70, 90], "reportTypeConfirmedTestWeight": 100}"#.utf8)
            .write(to: folder.appendingPathComponent("config.json"))
        print(
            "gaen-bench hostile-keyfile: \(shape.rawValue), export.bin \(Figures.grouped(Double(binary.count))) bytes, "
                + "archive \(Figures.grouped(Double(zip.count))) bytes (ratio \(Figures.decimals(Double(binary.count) / Double(zip.count), 1)))")
    }

    /// export.bin after its header: a batch 1 of 1 header with one signature info, the shape's
    /// fields, and an unknown field (15) of random bytes that keeps the ratio near `ratio`.
    static func body(_ shape: Shape, size: Int, ratio: Int) -> [UInt8] {
        var body: [UInt8] = [0x09] + le64(1_700_000_000) + [0x11] + le64(1_700_086_400) + [0x1A, 2] + Array("US".utf8) + [0x20, 1, 0x28, 1]
        let info: [UInt8] =
            [0x1A, 2] + Array("v1".utf8) + [0x22, 3] + Array("310".utf8) + [0x2A, UInt8(SignatureInfo.ecdsaP256SHA256.utf8.count)]
            + Array(SignatureInfo.ecdsaP256SHA256.utf8)
        body += [0x32, UInt8(info.count)] + info
        var generator = SplitMix64(seed: 16)
        // 750,000 random keys are already about 13 MB of archive: no random padding for them.
        let padding = shape == .validKeysAtLimit ? 0 : max(size / max(ratio, 1), 0)
        let room = size - body.count - padding - 8
        switch shape {
        case .emptyKeys:
            body += repeatElement([UInt8(0x3A), 0], count: room / 2).joined()
        case .emptyKeysAtLimit:
            body += repeatElement([UInt8(0x3A), 0], count: KeyFileLimits.maximumKeys).joined()
            body += zeros(size - body.count - padding - 8)
        case .validKeysAtLimit:
            let start = ENIntervalNumber(rawValue: 2_900_000).rollingStart
            for index in 0..<KeyFileLimits.maximumKeys {
                var key: [UInt8] = [0x0A, 16]
                key += Bytes16(words: (generator.next(), generator.next())).bytes
                key += [0x10, UInt8(index % 9), 0x18] + varint(UInt64(start.advanced(by: -144 * (index % 14)).rawValue)) + [0x28, 1, 0x30, 0]
                body += [0x3A, UInt8(key.count)] + key
            }
            body += zeros(size - body.count - padding - 8)
        case .signatureInfos:
            body += repeatElement([UInt8(0x32), 0], count: room / 2).joined()
        case .signatures:
            body = Array(repeatElement([UInt8(0x0A), 0], count: (size - padding - 8) / 2).joined())
        }
        var random = [UInt8](repeating: 0, count: padding)
        for index in stride(from: 0, to: padding, by: 8) {
            withUnsafeBytes(of: generator.next()) { word in
                for offset in 0..<min(8, padding - index) { random[index + offset] = word[offset] }
            }
        }
        return body + [0x7A] + varint(UInt64(padding)) + random
    }

    /// An unknown field of zeros, `count` bytes in all: they cost inflated bytes, not archive bytes.
    static func zeros(_ count: Int) -> [UInt8] {
        let fill = max(count - 6, 0)
        return [0x7A] + varint(UInt64(fill)) + [UInt8](repeating: 0, count: fill)
    }

    static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func varint(_ value: UInt64) -> [UInt8] { ExportBinary.varint(value) }
}
