// SPDX-License-Identifier: GPL-3.0-or-later

/// export.bin's one decoder: the 16-byte header, then the `TemporaryExposureKeyExport` fields, fed
/// whatever bytes are at hand (swift-nio's `NIOSingleStepByteToMessageDecoder`: each call decodes
/// what it can and says whether it needs more). A file in memory is fed whole, once; a zip entry is
/// fed a window at a time (`ExportInput`), so that a file of 750,000 keys costs a few buffers
/// instead of its 25 MB. Either way the same fields, limits, errors and counts, never decoded whole
/// (GMS reads it so too: `TemporaryExposureKeyFileMetadataParser`,
/// `StreamingTemporaryExposureKeyFileParser`).
///
/// It keeps the header fields and hands out the key messages of `keys` and `revised_keys` one at
/// a time, undecoded (`KeyTally` decodes them), each counted as soon as its tag is seen, empty ones
/// included: the 750,001st stops the reading with `tooManyKeys`, whatever follows.
///
/// Bounds, so that no file within the archive limits costs more than its own bytes: at most
/// `KeyFileLimits.maximumSignatureInfos` signature infos, header strings of at most
/// `maximumHeaderStringBytes`, and messages (key, revised key, signature info) of at most
/// `maximumMessageBytes`, which is all a window has to hold of one item.
struct ExportDecoder {
    /// A key or revised key message's body, valid until the decoder is fed again.
    struct KeyMessage {
        var revised: Bool
        var body: UnsafeRawBufferPointer
    }

    enum Step {
        case key(KeyMessage)
        /// The bytes at hand end inside an item: call again with them and more.
        case needMore
        case end
    }

    /// The header fields read so far; no keys.
    private(set) var header = KeyExport(batchNumber: 0, batchSize: 0, hasBatchNumber: false, hasBatchSize: false)
    private(set) var keyMessages = 0
    private(set) var revisedKeyMessages = 0
    private var headerChecked = false
    /// An unknown field (or a value to refuse) partly passed over when the bytes ran out.
    private var skip: WireSkip?

    /// Decodes from `cursor` up to the next key message; `cursor.position` ends after what was
    /// used, so that a caller keeps only the rest.
    mutating func decode(_ cursor: inout WireCursor) throws(WireError) -> Step {
        if !headerChecked {
            let magic = ExportBinary.header
            guard cursor.available >= magic.count else {
                if cursor.isComplete { throw .badHeader }
                return .needMore
            }
            guard try cursor.take(magic.count).elementsEqual(magic) else { throw .badHeader }
            headerChecked = true
        }
        while true {
            if skip != nil {
                guard try skip!.advance(&cursor) else { return .needMore }
                skip = nil
            }
            // One field whole, or nothing of it: nothing is changed before its last byte is read.
            let start = cursor.position
            do throws(WireError) {
                guard let (field, wire) = try cursor.tag() else { return .end }
                if let message = try decodeField(field, wire, &cursor) { return .key(message) }
            } catch .needMore {
                cursor.position = start
                return .needMore
            }
        }
    }

    private mutating func decodeField(_ field: UInt32, _ wire: WireCursor.Wire, _ cursor: inout WireCursor) throws(WireError) -> KeyMessage? {
        switch (field, wire) {
        case (1, .fixed64): header.startTimestamp = try cursor.fixed64()
        case (2, .fixed64): header.endTimestamp = try cursor.fixed64()
        case (3, .lengthDelimited):
            let limit = KeyFileLimits.maximumHeaderStringBytes
            let length = try cursor.length()
            guard length <= limit else {
                skip = WireSkip(bytes: length, then: .overLimit("region", length, limit))
                return nil
            }
            header.region = try WireCursor.utf8(try cursor.take(length), "region")
        case (4, .varint):
            header.batchNumber = Int32(truncatingIfNeeded: try cursor.varint())
            header.hasBatchNumber = true
        case (5, .varint):
            header.batchSize = Int32(truncatingIfNeeded: try cursor.varint())
            header.hasBatchSize = true
        case (6, .lengthDelimited):
            guard header.signatureInfos.count < KeyFileLimits.maximumSignatureInfos else {
                throw .invalid("more than \(KeyFileLimits.maximumSignatureInfos) signature infos, over the limit")
            }
            let length = try cursor.length()
            guard length <= KeyFileLimits.maximumMessageBytes else {
                skip = WireSkip(bytes: length, then: .oversized("a signature info", length))
                return nil
            }
            header.signatureInfos.append(try Self.signatureInfo(try cursor.take(length)))
        case (7, .lengthDelimited), (8, .lengthDelimited):
            let total = keyMessages + revisedKeyMessages + 1
            guard total <= KeyFileLimits.maximumKeys else { throw .tooManyKeys(total) }
            let length = try cursor.length()
            guard length <= KeyFileLimits.maximumMessageBytes else {
                skip = WireSkip(bytes: length, then: .oversized(field == 8 ? "revised key \(total - 1)" : "key \(total - 1)", length))
                return nil
            }
            let body = try cursor.take(length)
            if field == 8 { revisedKeyMessages += 1 } else { keyMessages += 1 }
            return KeyMessage(revised: field == 8, body: body)
        default:
            skip = try WireSkip(field, wire, &cursor)
        }
        return nil
    }

    /// A `SignatureInfo` message's fields from its body.
    private static func signatureInfo(_ body: UnsafeRawBufferPointer) throws(WireError) -> SignatureInfo {
        var cursor = WireCursor(body, isComplete: true)
        var info = SignatureInfo(verificationKeyID: "", verificationKeyVersion: "", signatureAlgorithm: "")
        let limit = KeyFileLimits.maximumHeaderStringBytes
        while let (field, wire) = try cursor.tag() {
            switch (field, wire) {
            case (1, .lengthDelimited): info.appBundleID = try cursor.string("app_bundle_id", limit: limit)
            case (2, .lengthDelimited): info.androidPackage = try cursor.string("android_package", limit: limit)
            case (3, .lengthDelimited): info.verificationKeyVersion = try cursor.string("verification_key_version", limit: limit)
            case (4, .lengthDelimited): info.verificationKeyID = try cursor.string("verification_key_id", limit: limit)
            case (5, .lengthDelimited): info.signatureAlgorithm = try cursor.string("signature_algorithm", limit: limit)
            default: try cursor.skip(field, wire)
            }
        }
        return info
    }
}
