// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import Storage
import SwiftProtobuf
import ZIPFoundation

extension KeyFileWriter {
    /// Writes the signed archive of `export` to `path` (replaced whole, or not at all) without
    /// holding the archive, export.bin or every key's message at once: export.bin is written to a
    /// file beside `path` a key at a time and hashed on the way, signed from its digest, and zipped
    /// from that file 64 KiB at a time. The bytes are `archive(_:)`'s: the header fields, then
    /// the keys sorted by their bytes, then the revised keys, as SwiftProtobuf serializes the whole
    /// message (fields in number order). What stays in memory is the keys themselves (40 bytes
    /// each, at most 750,000 a file), which must be sorted.
    ///
    /// The key server's exports use it: `archive(_:)` of 700,000 keys peaked at 384 MiB
    /// (docs/keyserver.md, "Export memory").
    package func write(_ export: KeyExport, toFile path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let binary = directory + "/.\(name).export-bin-\(getpid())"
        let zip = directory + "/.\(name).zip-\(getpid())"
        defer {
            try? AtomicFile.remove(binary)
            try? AtomicFile.remove(zip)
        }
        try? AtomicFile.remove(binary)
        try? AtomicFile.remove(zip)
        let digest: ECDSADigest = signatureInfo.signatureAlgorithm == SignatureInfo.ecdsaP256SHA512 ? .sha512 : .sha256
        let hash = try Self.writeExportBinary(export, signatureInfos: [signatureInfo], to: binary, digest: digest)
        let signature = try Self.exportSignature(hash: hash, digest: digest, batch: export, signers: [self])
        let size = try AtomicFile.size(of: binary)

        // In a scope of its own: the archive's FILE is flushed and closed when it goes.
        do {
            let archive = try Archive(url: URL(fileURLWithPath: zip), accessMode: .create)
            let input = try AppendOnlyFile(path: binary, mode: .readOnly)
            try archive.addEntry(with: KeyFileArchive.binaryName, type: .file, uncompressedSize: size, compressionMethod: .deflate) { position, count in
                var chunk = [UInt8](repeating: 0, count: count)
                let read = try chunk.withUnsafeMutableBytes { buffer in
                    Result { () throws(FileSystemError) in try input.read(into: buffer, at: position) }
                }.get()
                return Data(chunk.prefix(read))
            }
            try archive.addEntry(
                with: KeyFileArchive.signatureName, type: .file, uncompressedSize: Int64(signature.count), compressionMethod: .deflate
            ) { position, count in
                Data(signature[Int(position)..<(Int(position) + count)])
            }
        }
        // The finished zip (made 0666 less the umask, as the whole archive was) is synced and
        // renamed over `path`.
        try AppendOnlyFile(path: zip, mode: .readOnly).sync()
        try AtomicFile.move(zip, to: path)
    }

    /// Writes export.bin to `path` a key at a time, returning its `digest`.
    static func writeExportBinary(_ export: KeyExport, signatureInfos: [SignatureInfo], to path: String, digest: ECDSADigest) throws -> [UInt8] {
        var header = export
        header.keys = []
        header.revisedKeys = []
        let file = try AppendOnlyFile(path: path, mode: .append)
        let hasher = try DigestStream(digest)
        var buffer = [UInt8]()
        buffer.reserveCapacity(1 << 16)
        func flush() throws {
            try buffer.withUnsafeBytes { bytes in
                hasher.update(bytes)
                try file.append(bytes)
            }
            buffer.removeAll(keepingCapacity: true)
        }
        // The header and the export's own fields (1 to 6): everything but the keys.
        buffer += exportBinary(header, signatureInfos: signatureInfos)
        for (field, keys) in [(UInt64(7), export.keys), (UInt64(8), export.revisedKeys)] {
            // Keys already in file order (the key server sorts them in place) are not copied.
            let sorted = Swift.zip(keys, keys.dropFirst()).allSatisfy { !fileOrder($1, $0) } ? keys : keys.sorted(by: fileOrder)
            for key in sorted {
                // Serializing a message built from valid fields cannot fail.
                let body: [UInt8] = try! message(key).serializedBytes()
                buffer += ExportBinary.varint(field << 3 | 2)
                buffer += ExportBinary.varint(UInt64(body.count))
                buffer += body
                if buffer.count >= 1 << 16 { try flush() }
            }
        }
        try flush()
        try file.sync()
        return hasher.finish()
    }
}
