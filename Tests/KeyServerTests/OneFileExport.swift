// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import KeyServer
import Synchronization

/// What an export session held, recorded as one file: for tests of the store that need no signed
/// file, only the keys a batch would carry and the batch recorded.
struct OneFileExport: Sendable {
    var keys: [KeyStore.StoredKey] = []
    var revisions: [KeyStore.StoredKey] = []
    var start = UnixTime(seconds: 0)

    /// Exports what waits at `now` as one file named by `name` (given what it holds) with `bytes`;
    /// returns the name, or nil when nothing was exported.
    static func export(
        _ store: KeyStore, now: UnixTime, bytes: [UInt8] = [], name: @escaping @Sendable (OneFileExport) -> String
    ) async throws -> (name: String?, held: OneFileExport) {
        let held = Mutex(OneFileExport())
        let names = try await store.exportBatch(now: now) { session in
            var batch = OneFileExport(start: session.start)
            var after: Bytes16?
            repeat {
                let page = try session.keys(after: after)
                batch.keys += page.keys
                after = page.next
            } while after != nil
            repeat {
                let page = try session.revisions(after: after)
                batch.revisions += page.keys
                after = page.next
            } while after != nil
            let file = try session.beginFile(name: name(batch), keys: batch.keys.count + batch.revisions.count)
            try session.mark(batch.keys, revisions: false, file: file)
            try session.mark(batch.revisions, revisions: true, file: file)
            try session.store(file: file, bytes: bytes)
            held.withLock { $0 = batch }
        }
        return (names?.first, held.withLock { $0 })
    }
}
