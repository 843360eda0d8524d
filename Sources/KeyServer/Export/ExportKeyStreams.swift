// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// Waiting keys read a page at a time, one at a time.
struct PagedKeys {
    private let read: (Bytes16?) throws(DatabaseError) -> KeyStore.ExportPage
    private var page: [KeyStore.StoredKey] = []
    private var position = 0
    private var after: Bytes16?
    private var done = false

    init(_ read: @escaping (Bytes16?) throws(DatabaseError) -> KeyStore.ExportPage) { self.read = read }

    mutating func next() throws(DatabaseError) -> KeyStore.StoredKey? {
        while position == page.count {
            if done { return nil }
            let next = try read(after)
            page = next.keys
            position = 0
            after = next.next
            done = next.next == nil
        }
        position += 1
        return page[position - 1]
    }
}

/// The waiting keys merged with the padding, both in key order: each key with whether it is stored
/// (padding is not, and is never marked).
struct MergedKeys {
    private var stored: PagedKeys
    private var waiting: KeyStore.StoredKey?
    private var started = false
    private let padding: [KeyStore.StoredKey]
    private var paddingPosition = 0

    init(session: KeyStore.ExportSession, padding: [KeyStore.StoredKey]) {
        stored = PagedKeys { after throws(DatabaseError) in try session.keys(after: after) }
        self.padding = padding
    }

    mutating func next() throws(DatabaseError) -> (KeyStore.StoredKey, Bool)? {
        if !started {
            waiting = try stored.next()
            started = true
        }
        let pad = paddingPosition < padding.count ? padding[paddingPosition] : nil
        if let key = waiting, pad.map({ !$0.key.keyData.bytes.lexicographicallyPrecedes(key.key.keyData.bytes) }) ?? true {
            waiting = try stored.next()
            return (key, true)
        }
        guard let pad else { return nil }
        paddingPosition += 1
        return (pad, false)
    }
}
