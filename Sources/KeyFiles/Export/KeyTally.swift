// SPDX-License-Identifier: GPL-3.0-or-later

/// The key messages of one kind (`keys` or `revised_keys`) as they are read: each decoded and
/// validated (`ExportBinary.validate`), the valid ones handed back, the invalid ones dropped and
/// counted, the first `KeyFileLimits.maximumDroppedReasons` with their reason. A message that does
/// not decode is the file's fault, named by its index among its kind.
struct KeyTally {
    let revised: Bool
    /// Messages read so far, valid or not.
    private(set) var read = 0
    private(set) var valid = 0
    private(set) var droppedCount = 0
    private(set) var dropped: [DroppedKey] = []

    init(revised: Bool) {
        self.revised = revised
    }

    /// The key `message` holds; nil when it is dropped.
    mutating func take(_ message: ExportDecoder.KeyMessage) throws(KeyFileError) -> DiagnosisKey? {
        read += 1
        let raw: RawKey
        do throws(WireError) {
            raw = try RawKey(message.body)
        } catch {
            throw .malformed("export.bin: \(revised ? "revised key" : "key") \(read - 1): \(error.reason)")
        }
        switch ExportBinary.validate(raw) {
        case .success(let key):
            valid += 1
            return key
        case .failure(let invalid):
            droppedCount += 1
            if dropped.count < KeyFileLimits.maximumDroppedReasons {
                dropped.append(DroppedKey(index: read - 1, revised: revised, reason: invalid.text))
            }
            return nil
        }
    }
}

/// One `TemporaryExposureKey` message's fields as the file holds them (proto2: absent is nil),
/// `keyData` in place in the message's bytes.
struct RawKey {
    var keyData = UnsafeRawBufferPointer(start: nil, count: 0)
    var transmissionRiskLevel: Int32 = 0
    var rollingStartIntervalNumber: Int32?
    var rollingPeriod: Int32?
    var reportType: ReportType?
    var daysSinceOnsetOfSymptoms: Int32?

    init(_ body: UnsafeRawBufferPointer) throws(WireError) {
        var cursor = WireCursor(body, isComplete: true)
        while let (field, wire) = try cursor.tag() {
            switch (field, wire) {
            case (1, .lengthDelimited): keyData = try cursor.lengthDelimited()
            case (2, .varint): transmissionRiskLevel = Int32(truncatingIfNeeded: try cursor.varint())
            case (3, .varint): rollingStartIntervalNumber = Int32(truncatingIfNeeded: try cursor.varint())
            case (4, .varint): rollingPeriod = Int32(truncatingIfNeeded: try cursor.varint())
            case (5, .varint):
                // A closed proto2 enum: an unknown value leaves the field as it was (SwiftProtobuf).
                if let known = ReportType(rawValue: Int32(truncatingIfNeeded: try cursor.varint())) { reportType = known }
            case (6, .varint):
                let zigzag = UInt32(truncatingIfNeeded: try cursor.varint())
                daysSinceOnsetOfSymptoms = Int32(bitPattern: zigzag >> 1) ^ -Int32(bitPattern: zigzag & 1)
            default:
                try cursor.skip(field, wire)
            }
        }
    }
}
