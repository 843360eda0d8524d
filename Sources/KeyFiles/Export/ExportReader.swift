// SPDX-License-Identifier: GPL-3.0-or-later

/// export.bin read in place, never decoded whole: its header fields at once, its keys one at a
/// time, so that a file's keys need never all be in memory (GMS reads it so too:
/// `TemporaryExposureKeyFileMetadataParser`, `StreamingTemporaryExposureKeyFileParser`).
///
/// Making a reader reads the 16-byte header and the `TemporaryExposureKeyExport` fields but
/// `keys` and `revised_keys`, whose messages are only counted, empty ones included, each as soon
/// as it is seen: the 750,001st stops the reading with `tooManyKeys`, whatever follows. The key
/// messages themselves are read by `keys(revised:)`, which a caller asks for only once it has the
/// signature's verdict over export.bin's raw bytes (detection asks only for verified files).
///
/// Bounds, so that no file within the archive limits costs more than its own bytes: at most
/// `KeyFileLimits.maximumSignatureInfos` signature infos, header strings of at most
/// `maximumHeaderStringBytes`, and the reasons of at most `maximumDroppedReasons` dropped keys
/// (all are counted).
package struct ExportReader: Sendable {
    /// The header fields; no keys.
    package let header: KeyExport
    /// Key messages in `keys` and `revised_keys` together, valid or not.
    package let keyMessages: Int
    let bytes: [UInt8]

    package init(_ bytes: [UInt8]) throws(KeyFileError) {
        guard bytes.count >= ExportBinary.header.count, bytes.prefix(ExportBinary.header.count).elementsEqual(ExportBinary.header) else {
            throw .badHeader
        }
        self.bytes = bytes
        var header = KeyExport(batchNumber: 0, batchSize: 0, hasBatchNumber: false, hasBatchSize: false)
        var count = 0
        var reader = WireReader(bytes, from: ExportBinary.header.count, to: bytes.count)
        do {
            while let (field, wire) = try reader.tag() {
                switch (field, wire) {
                case (1, .fixed64): header.startTimestamp = try reader.fixed64()
                case (2, .fixed64): header.endTimestamp = try reader.fixed64()
                case (3, .lengthDelimited): header.region = try reader.string("region", limit: KeyFileLimits.maximumHeaderStringBytes)
                case (4, .varint):
                    header.batchNumber = Int32(truncatingIfNeeded: try reader.varint())
                    header.hasBatchNumber = true
                case (5, .varint):
                    header.batchSize = Int32(truncatingIfNeeded: try reader.varint())
                    header.hasBatchSize = true
                case (6, .lengthDelimited):
                    guard header.signatureInfos.count < KeyFileLimits.maximumSignatureInfos else {
                        throw WireReader.Failure(reason: "more than \(KeyFileLimits.maximumSignatureInfos) signature infos, over the limit")
                    }
                    header.signatureInfos.append(try Self.signatureInfo(&reader))
                case (7, .lengthDelimited), (8, .lengthDelimited):
                    count += 1
                    guard count <= KeyFileLimits.maximumKeys else { throw KeyFileError.tooManyKeys(count) }
                    let body = try reader.lengthDelimited()
                    guard body.count <= KeyFileLimits.maximumMessageBytes else {
                        throw WireReader.Failure.oversized(field == 8 ? "revised key \(count - 1)" : "key \(count - 1)", body.count)
                    }
                default:
                    try reader.skip(field, wire)
                }
            }
        } catch let error as KeyFileError {
            throw error
        } catch {
            throw .malformed("export.bin: \((error as? WireReader.Failure)?.reason ?? "\(error)")")
        }
        self.header = header
        keyMessages = count
    }

    /// The keys (or revised keys), one at a time in the file's order, each validated.
    package func keys(revised: Bool = false) -> KeyStream {
        KeyStream(reader: WireReader(bytes, from: ExportBinary.header.count, to: bytes.count), field: revised ? 8 : 7)
    }

    /// Every key and revised key validated, none kept: how many are valid, and how many dropped.
    package func check() throws(KeyFileError) -> (keys: Int, revisedKeys: Int, dropped: Int) {
        var counts = (keys: 0, revisedKeys: 0, dropped: 0)
        var keys = keys()
        while try keys.next() != nil { counts.keys += 1 }
        var revised = self.keys(revised: true)
        while try revised.next() != nil { counts.revisedKeys += 1 }
        counts.dropped = keys.droppedCount + revised.droppedCount
        return counts
    }

    /// The whole export, keys in arrays: for tools, which show a file whole. Detection streams.
    package func export() throws(KeyFileError) -> KeyExport {
        var export = header
        var keys = keys()
        while let key = try keys.next() { export.keys.append(key) }
        var revised = self.keys(revised: true)
        while let key = try revised.next() { export.revisedKeys.append(key) }
        export.dropped = Array((keys.dropped + revised.dropped).prefix(KeyFileLimits.maximumDroppedReasons))
        export.droppedCount = keys.droppedCount + revised.droppedCount
        return export
    }

    private static func signatureInfo(_ reader: inout WireReader) throws(WireReader.Failure) -> SignatureInfo {
        let body = try reader.lengthDelimited()
        guard body.count <= KeyFileLimits.maximumMessageBytes else { throw .oversized("a signature info", body.count) }
        return try signatureInfo(reader.bytes, body)
    }

    /// A `SignatureInfo` message's fields from its body.
    static func signatureInfo(_ bytes: [UInt8], _ body: Range<Int>) throws(WireReader.Failure) -> SignatureInfo {
        var inner = WireReader(bytes, from: body.lowerBound, to: body.upperBound)
        var info = SignatureInfo(verificationKeyID: "", verificationKeyVersion: "", signatureAlgorithm: "")
        let limit = KeyFileLimits.maximumHeaderStringBytes
        while let (field, wire) = try inner.tag() {
            switch (field, wire) {
            case (1, .lengthDelimited): info.appBundleID = try inner.string("app_bundle_id", limit: limit)
            case (2, .lengthDelimited): info.androidPackage = try inner.string("android_package", limit: limit)
            case (3, .lengthDelimited): info.verificationKeyVersion = try inner.string("verification_key_version", limit: limit)
            case (4, .lengthDelimited): info.verificationKeyID = try inner.string("verification_key_id", limit: limit)
            case (5, .lengthDelimited): info.signatureAlgorithm = try inner.string("signature_algorithm", limit: limit)
            default: try inner.skip(field, wire)
            }
        }
        return info
    }
}

/// The keys (or revised keys) of an export.bin, read one at a time; invalid ones are dropped and
/// counted, the first `KeyFileLimits.maximumDroppedReasons` with their reason.
package struct KeyStream: Sendable {
    var reader: WireReader
    let field: UInt32
    /// Key messages of this kind read so far, valid or not.
    package private(set) var read = 0
    package private(set) var droppedCount = 0
    package private(set) var dropped: [DroppedKey] = []

    /// The next valid key; nil at the end of the file.
    package mutating func next() throws(KeyFileError) -> DiagnosisKey? {
        do throws(WireReader.Failure) {
            while let (field, wire) = try reader.tag() {
                guard field == self.field, wire == .lengthDelimited else {
                    try reader.skip(field, wire)
                    continue
                }
                let body = try reader.lengthDelimited()
                read += 1
                switch ExportBinary.validate(try RawKey(reader.bytes, body)) {
                case .success(let key):
                    return key
                case .failure(let invalid):
                    droppedCount += 1
                    if dropped.count < KeyFileLimits.maximumDroppedReasons {
                        dropped.append(DroppedKey(index: read - 1, revised: field == 8, reason: invalid.text))
                    }
                }
            }
            return nil
        } catch {
            throw .malformed("export.bin: \(field == 8 ? "revised key" : "key") \(read - 1): \(error.reason)")
        }
    }
}

/// One `TemporaryExposureKey` message's fields as the file holds them (proto2: absent is nil).
struct RawKey {
    var keyData: ArraySlice<UInt8> = []
    var transmissionRiskLevel: Int32 = 0
    var rollingStartIntervalNumber: Int32?
    var rollingPeriod: Int32?
    var reportType: ReportType?
    var daysSinceOnsetOfSymptoms: Int32?

    init(_ bytes: [UInt8], _ body: Range<Int>) throws(WireReader.Failure) {
        var reader = WireReader(bytes, from: body.lowerBound, to: body.upperBound)
        while let (field, wire) = try reader.tag() {
            switch (field, wire) {
            case (1, .lengthDelimited): keyData = bytes[try reader.lengthDelimited()]
            case (2, .varint): transmissionRiskLevel = Int32(truncatingIfNeeded: try reader.varint())
            case (3, .varint): rollingStartIntervalNumber = Int32(truncatingIfNeeded: try reader.varint())
            case (4, .varint): rollingPeriod = Int32(truncatingIfNeeded: try reader.varint())
            case (5, .varint):
                // A closed proto2 enum: an unknown value leaves the field as it was (SwiftProtobuf).
                if let known = ReportType(rawValue: Int32(truncatingIfNeeded: try reader.varint())) { reportType = known }
            case (6, .varint):
                let zigzag = UInt32(truncatingIfNeeded: try reader.varint())
                daysSinceOnsetOfSymptoms = Int32(bitPattern: zigzag >> 1) ^ -Int32(bitPattern: zigzag & 1)
            default:
                try reader.skip(field, wire)
            }
        }
    }
}
