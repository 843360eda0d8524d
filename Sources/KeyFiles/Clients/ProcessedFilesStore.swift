// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Storage

/// The key files already handled, by absolute URL, with when: `<data-dir>/processed-key-files`,
/// replaced atomically. The set, not a "last seen" position, is what decides what to download, so an
/// index that is reordered or shrinks cannot make a file be handled twice or skipped.
///
/// Entries are forgotten after `retentionDays` (15: one day more than servers keep files), never
/// because a file left the index, which a server glitch could cause.
package struct ProcessedFilesStore: Sendable {
    package let path: String
    package let retentionDays: Int64

    package init(dataDirectory: DataDirectory, retentionDays: Int64 = 15) {
        path = dataDirectory.path(of: "processed-key-files")
        self.retentionDays = retentionDays
    }

    /// The processed URLs with the time each was marked.
    package func load() throws(ClientError) -> [String: UnixTime] {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: 16 << 20)
        } catch {
            throw .local("processed key files: \(error)")
        }
        guard let bytes else { return [:] }
        var entries = [String: UnixTime]()
        // One entry a line: Unix seconds, a tab, the URL. A line that does not parse is dropped: at
        // worst that file is downloaded and matched again, which is harmless.
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, let seconds = Int64(parts[0]), let time = UnixTime(exactlySeconds: seconds) else { continue }
            entries[String(parts[1])] = time
        }
        return entries
    }

    /// Adds `url`, drops entries past the retention, and writes the set atomically.
    package func markProcessed(_ url: String, at time: UnixTime) throws(ClientError) {
        var entries = try load()
        entries[url] = time
        let oldest = time.adding(seconds: -retentionDays * 86_400)
        let text = entries.filter { $0.value >= oldest }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            .map { "\($0.value.seconds)\t\($0.key)\n" }.joined()
        do {
            try AtomicFile.write(Array(text.utf8), to: path)
        } catch {
            throw .local("processed key files: \(error)")
        }
    }
}
