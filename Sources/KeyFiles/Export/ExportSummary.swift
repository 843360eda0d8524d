// SPDX-License-Identifier: GPL-3.0-or-later

/// What one reading of export.bin gives before any of its keys is used: the header fields, the key
/// messages counted, and every key validated on the way, none kept, with the answer (`check`) held
/// back until the caller has the signature's verdict. Detection so reads a file once for its
/// verdict and its check (the digests are taken from the same bytes, `JudgedKeyFile`).
///
/// A key message that does not decode does not stop the reading: the rest of the file is read, so
/// that a fault of its structure (or the key limit) is named first, as it was when the header was
/// read before any key; `check` then names the first undecodable key, else the first undecodable
/// revised key (keys are read before revised keys).
package struct ExportSummary: Sendable {
    /// The header fields; no keys.
    package var header: KeyExport
    package var keyMessages: Int
    package var revisedKeyMessages: Int
    /// The reasons of the first dropped keys, keys before revised keys (`KeyExport.dropped`).
    private(set) var dropped: [DroppedKey]
    private var checked: (keys: Int, revisedKeys: Int, dropped: Int)
    private var keyFailure: KeyFileError?
    private var revisedKeyFailure: KeyFileError?

    package init(reading input: ExportInput) throws(KeyFileError) {
        try self.init(reading: input) { _, _ in }
    }

    /// The same reading, with every valid key shown to `each` in the file's order.
    init(reading input: ExportInput, each: (DiagnosisKey, _ revised: Bool) -> Void) throws(KeyFileError) {
        var keys = KeyTally(revised: false)
        var revisedKeys = KeyTally(revised: true)
        var failures: (keys: KeyFileError?, revised: KeyFileError?) = (nil, nil)
        while let message = try input.nextKey() {
            if message.revised {
                Self.take(message, into: &revisedKeys, failure: &failures.revised, each)
            } else {
                Self.take(message, into: &keys, failure: &failures.keys, each)
            }
        }
        header = input.header
        keyMessages = input.keyMessages
        revisedKeyMessages = input.revisedKeyMessages
        dropped = Array((keys.dropped + revisedKeys.dropped).prefix(KeyFileLimits.maximumDroppedReasons))
        checked = (keys.valid, revisedKeys.valid, keys.droppedCount + revisedKeys.droppedCount)
        keyFailure = failures.keys
        revisedKeyFailure = failures.revised
    }

    /// Every key and revised key validated, none kept: how many are valid, and how many dropped.
    package func check() throws(KeyFileError) -> (keys: Int, revisedKeys: Int, dropped: Int) {
        if let keyFailure { throw keyFailure }
        if let revisedKeyFailure { throw revisedKeyFailure }
        return checked
    }

    /// One message into its kind's tally; after the kind's first failure, its messages are only
    /// counted (by the decoder).
    private static func take(
        _ message: ExportDecoder.KeyMessage, into tally: inout KeyTally, failure: inout KeyFileError?, _ each: (DiagnosisKey, Bool) -> Void
    ) {
        guard failure == nil else { return }
        do throws(KeyFileError) {
            if let key = try tally.take(message) { each(key, tally.revised) }
        } catch {
            failure = error
        }
    }
}
