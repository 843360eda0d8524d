// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import Foundation
import Storage
import SwiftProtobuf
import ZIPFoundation

/// One signed key file written a key at a time, for exports larger than memory should hold: keys
/// are appended in file order (by their bytes), then the revised keys likewise; `finish` signs
/// export.bin from the digest taken on the way and zips it into place. What stays in memory is a
/// 64 KiB buffer, whatever the file's size. The bytes are `KeyFileWriter.archive(_:)`'s for the
/// same keys.
package final class KeyFileStream {
    /// Keys out of file order: the caller's mistake, refused so that no file says otherwise.
    package struct OrderError: Error, CustomStringConvertible {
        package var description: String
    }

    private let writer: KeyFileWriter
    private let header: KeyExport
    private let path: String
    private let binary: String
    private let file: AppendOnlyFile
    private let hasher: DigestStream
    private let digest: ECDSADigest
    private var buffer = [UInt8]()
    private var last: (field: UInt64, key: DiagnosisKey)?
    private var finished = false
    /// Keys and revised keys appended.
    package private(set) var count = 0

    /// Starts the file that `finish` puts at `path`, with `header`'s fields (its keys are ignored).
    package init(writer: KeyFileWriter, header: KeyExport, path: String) throws {
        self.writer = writer
        var header = header
        header.keys = []
        header.revisedKeys = []
        self.header = header
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        binary = directory + "/.\((path as NSString).lastPathComponent).export-bin-\(getpid())"
        try? AtomicFile.remove(binary)
        file = try AppendOnlyFile(path: binary, mode: .append)
        digest = writer.signatureInfo.signatureAlgorithm == SignatureInfo.ecdsaP256SHA512 ? .sha512 : .sha256
        hasher = try DigestStream(digest)
        buffer.reserveCapacity(1 << 16)
        // The header and the export's own fields (1 to 6): everything but the keys.
        buffer += KeyFileWriter.exportBinary(header, signatureInfos: [writer.signatureInfo])
    }

    deinit {
        if !finished { try? AtomicFile.remove(binary) }
    }

    /// Appends a key (field 7): after every earlier key, before any revised key.
    package func append(key: DiagnosisKey) throws { try append(key, field: 7) }

    /// Appends a revised key (field 8), after the keys and every earlier revised key.
    package func append(revised: DiagnosisKey) throws { try append(revised, field: 8) }

    private func append(_ key: DiagnosisKey, field: UInt64) throws {
        if let last, last.field > field || (last.field == field && KeyFileWriter.fileOrder(key, last.key)) {
            throw OrderError(description: "a key out of file order: keys must come sorted by their bytes, revised keys after them")
        }
        last = (field, key)
        // Serializing a message built from valid fields cannot fail.
        let body: [UInt8] = try! KeyFileWriter.message(key).serializedBytes()
        buffer += ExportBinary.varint(field << 3 | 2)
        buffer += ExportBinary.varint(UInt64(body.count))
        buffer += body
        count += 1
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws {
        try buffer.withUnsafeBytes { bytes in
            hasher.update(bytes)
            try file.append(bytes)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Signs export.bin and writes the archive to `path` (replaced whole, or not at all): zipped
    /// from export.bin 64 KiB at a time, synced, renamed into place.
    package func finish() throws {
        try flush()
        try file.sync()
        finished = true
        let zip = path + ".zip-\(getpid())"
        defer {
            try? AtomicFile.remove(binary)
            try? AtomicFile.remove(zip)
        }
        let signature = try KeyFileWriter.exportSignature(hash: hasher.finish(), digest: digest, batch: header, signers: [writer])
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
}
