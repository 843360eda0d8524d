// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

extension KeyFileWriter {
    /// Writes the signed archive of `export` to `path` (replaced whole, or not at all) without
    /// holding the archive, export.bin or every key's message at once (`KeyFileStream`). The bytes
    /// are `archive(_:)`'s: the header fields, then the keys sorted by their bytes, then the
    /// revised keys, as SwiftProtobuf serializes the whole message (fields in number order). What
    /// stays in memory is the keys themselves, which must be sorted; the key server streams its
    /// keys, already sorted, into a `KeyFileStream` instead.
    ///
    /// The key server's exports use it: `archive(_:)` of 700,000 keys peaked at 384 MiB
    /// (docs/keyserver.md, "Export memory").
    package func write(_ export: KeyExport, toFile path: String) throws {
        let stream = try KeyFileStream(writer: self, header: export, path: path)
        for (keys, revised) in [(export.keys, false), (export.revisedKeys, true)] {
            // Keys already in file order (the key server sorts them in place) are not copied.
            let sorted = Swift.zip(keys, keys.dropFirst()).allSatisfy { !Self.fileOrder($1, $0) } ? keys : keys.sorted(by: Self.fileOrder)
            for key in sorted {
                if revised { try stream.append(revised: key) } else { try stream.append(key: key) }
            }
        }
        try stream.finish()
    }
}
