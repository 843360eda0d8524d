// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Storage

/// The key files already handled, by absolute URL, with when: `<data-dir>/processed-key-files`,
/// replaced atomically. The set, not a "last seen" position, is what decides what to download, so an
/// index that is reordered or shrinks cannot make a file be handled twice or skipped.
///
/// Entries are forgotten after `retentionDays` (15: one day more than servers keep files), never
/// because a file left the index, which a server glitch could cause.
///
/// The file is bounded by what is written, not by refusing what is read (issue 40: an index of
/// 10,000 long names, whose files failed verification, filled it past the read limit in two runs
/// and every later run failed): at most `bounds.entries` entries and `bounds.writtenBytes` are
/// written, the oldest dropped first, and a file larger than the read limit (an earlier version's)
/// is read from its end, where the newest entries are. A dropped entry costs at most a file
/// downloaded and matched again, which changes no result.
package struct ProcessedFilesStore: Sendable {
    package let path: String
    package let retentionDays: Int64
    package let bounds: Bounds

    /// What is written and read at most.
    package struct Bounds: Sendable {
        package var entries: Int
        package var writtenBytes: Int
        package var readBytes: Int

        package init(entries: Int, writtenBytes: Int, readBytes: Int) {
            self.entries = entries
            self.writtenBytes = writtenBytes
            self.readBytes = readBytes
        }

        /// Two full indexes (`KeyFileDownloader.maximumIndexLines`); the bytes hold one full index
        /// of the longest lines (1,024 characters and the base), under the 16 MiB read limit.
        package static let standard = Bounds(entries: 20_000, writtenBytes: 12 << 20, readBytes: 16 << 20)
    }

    package init(dataDirectory: DataDirectory, retentionDays: Int64 = 15, bounds: Bounds = .standard) {
        path = dataDirectory.path(of: "processed-key-files")
        self.retentionDays = retentionDays
        self.bounds = bounds
    }

    /// The processed URLs with the time each was marked.
    package func load() throws(ClientError) -> [String: UnixTime] {
        let read: (bytes: [UInt8], cut: Bool)?
        do {
            read = try AtomicFile.readTail(path, limit: bounds.readBytes)
        } catch {
            throw .local("processed key files: \(error)")
        }
        guard let read else { return [:] }
        var lines = read.bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        // A tail read starts inside a line, which is not an entry.
        if read.cut, !lines.isEmpty { lines.removeFirst() }
        var entries = [String: UnixTime]()
        // One entry a line: Unix seconds, a tab, the URL. A line that does not parse is dropped: at
        // worst that file is downloaded and matched again, which is harmless.
        for line in lines {
            let parts = String(decoding: line, as: UTF8.self).split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, let seconds = Int64(parts[0]), let time = UnixTime(exactlySeconds: seconds) else { continue }
            entries[String(parts[1])] = time
        }
        return entries
    }

    /// The `index`'s URLs not processed yet, in index order.
    package func pending(_ index: [String]) throws(ClientError) -> [String] {
        let done = try load()
        return index.filter { done[$0] == nil }
    }

    /// Adds a run's `urls` in one write, drops entries past the retention and past the bounds
    /// (oldest first), and writes the set atomically.
    package func markProcessed(_ urls: [String], at time: UnixTime) throws(ClientError) {
        guard !urls.isEmpty else { return }
        var entries = try load()
        for url in urls { entries[url] = time }
        let oldest = time.adding(seconds: -retentionDays * 86_400)
        // Newest first, so that the bounds keep the newest.
        var kept = entries.filter { $0.value >= oldest }.sorted { ($0.value, $0.key) > ($1.value, $1.key) }
        if kept.count > bounds.entries { kept.removeLast(kept.count - bounds.entries) }
        var lines = [String]()
        var bytes = 0
        for entry in kept {
            let line = "\(entry.value.seconds)\t\(entry.key)\n"
            bytes += line.utf8.count
            if bytes > bounds.writtenBytes { break }
            lines.append(line)
        }
        do {
            try AtomicFile.write(Array(lines.reversed().joined().utf8), to: path)
        } catch {
            throw .local("processed key files: \(error)")
        }
    }

    /// Forgets every file, so that the next run downloads and matches all the server holds: what
    /// the worker does when the results those files made were lost.
    package func forgetAll() throws(ClientError) {
        do {
            try AtomicFile.remove(path)
        } catch {
            throw .local("processed key files: \(error)")
        }
    }
}
