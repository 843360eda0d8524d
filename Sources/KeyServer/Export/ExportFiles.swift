// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import ENCrypto
import Foundation
import PostgreSQL

/// What `GET /exports/…` serves: the index and the signed files, from the database the batches are
/// recorded in, so that every replica on one PostgreSQL database answers with the same bytes
/// whichever exported. A batch and its file are stored in one transaction
/// (`KeyStore.exportBatch`), so a file the index lists is there. Files of batches recorded before
/// the database held them are read from `directory` (SQLite's `--data-dir` exports).
///
/// Files never change once listed (a name is its batch's span), so they are kept in a cache bounded
/// in bytes, least recently used first out, until they leave the index; the index is read on each
/// request (one statement), so a new batch shows at once. One connection of its own, on a thread of its own: a 20 MB read
/// does not hold up the publishes on the store's.
package actor ExportFiles {
    package struct File: Sendable, Equatable {
        package var bytes: [UInt8]
        package var entityTag: String
    }

    private let database: (any Database)?
    private let thread = DatabaseThread(name: "export-files")
    package nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// The exports' root (`exposureKeyExport-XX`): its index is served even before a first batch.
    package let root: String
    let directory: String?
    let cacheLimit: Int
    private var cache: [String: File] = [:]
    /// Cached names, least recently used first.
    private var recent: [String] = []
    private var cachedBytes = 0

    /// Serves the batches recorded at `location`, and files the database does not hold from
    /// `directory`.
    package init(_ location: DatabaseLocation, root: String, directory: String?, cacheLimit: Int = 64 << 20) throws(DatabaseError) {
        database = try location.open()
        self.root = root
        self.directory = directory
        self.cacheLimit = cacheLimit
    }

    /// Serves `directory` alone, as a static server would (its index.txt is a file like the others).
    package init(directory: String) {
        database = nil
        root = ""
        self.directory = directory
        cacheLimit = 64 << 20
    }

    deinit { thread.stop() }

    /// Whether `name` is the index this serves from the database.
    package nonisolated func isIndex(_ name: String) -> Bool { !root.isEmpty && name == root + "/index.txt" }

    /// `<root>/index.txt`: every live batch's name, in the order the reference server lists them.
    package func index() throws -> File {
        let names = try database?.query("SELECT name FROM export_batch").compactMap { $0.first?.text }.filter { $0.hasPrefix(root + "/") } ?? []
        // A file that left the index (past the retention) leaves the cache too.
        let live = Set(names)
        for name in recent where !live.contains(name) { forget(name) }
        let bytes = Self.index(names)
        return File(bytes: bytes, entityTag: Self.entityTag(bytes))
    }

    private func forget(_ name: String) {
        recent.removeAll { $0 == name }
        cachedBytes -= cache.removeValue(forKey: name)?.bytes.count ?? 0
    }

    /// The file named `name` (`<root>/<start>-<end>-00001.zip`), or nil when no live batch has it.
    package func file(_ name: String) throws -> File? {
        if let cached = cache[name] {
            recent.removeAll { $0 == name }
            recent.append(name)
            return cached
        }
        var found: File?
        if let database, let row = try database.query("SELECT data, etag FROM export_file WHERE name = ?1", [.text(name)]).first,
            let bytes = row[0].blob, let tag = row[1].text
        {
            found = File(bytes: bytes, entityTag: tag)
        } else if let directory, let data = FileManager.default.contents(atPath: directory + "/" + name) {
            found = File(bytes: Array(data), entityTag: Self.entityTag(Array(data)))
        }
        // An index read as a file (a directory alone) changes with each export: never kept.
        if let found, !name.hasSuffix("index.txt") { keep(name, found) }
        return found
    }

    private func keep(_ name: String, _ file: File) {
        guard file.bytes.count <= cacheLimit else { return }
        while cachedBytes + file.bytes.count > cacheLimit, let oldest = recent.first { forget(oldest) }
        cache[name] = file
        recent.append(name)
        cachedBytes += file.bytes.count
    }

    /// Files and bytes cached now (tests).
    package var cached: (files: Int, bytes: Int) { (cache.count, cachedBytes) }

    /// The index's bytes: names sorted (a name starts with its batch's start), one a line, no
    /// trailing newline, as the reference's export worker writes it.
    package static func index(_ names: [String]) -> [UInt8] {
        Array(names.sorted().joined(separator: "\n").utf8)
    }

    /// A strong entity tag: the bytes' SHA-256, so that every replica gives a file the same one.
    package static func entityTag(_ bytes: [UInt8]) -> String {
        "\"" + Hex.encode(Digest.sha256(bytes)) + "\""
    }
}
