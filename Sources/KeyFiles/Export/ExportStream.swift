// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCrypto

/// export.bin read straight from its zip entry, a 256 KiB window at a time, never whole: what
/// detection reads, so that a file of 750,000 keys costs a few buffers instead of its 25 MB (and
/// its archive's 12 MB). The same rules as `ExportReader` (which tools use on a file in memory):
/// the same fields, limits, errors and counts, one message held at a time
/// (`KeyFileLimits.maximumMessageBytes`).
package enum ExportStream {
    /// What the first read of a file gives: the header fields, the key messages counted (none
    /// decoded), and the digests of export.bin that `digests` asked for.
    package struct Judged: Sendable {
        package var header: KeyExport
        package var keyMessages: Int
        package var revisedKeyMessages: Int
        package var hashes: [ECDSADigest: [UInt8]]
        /// What `ExportReader.check()` would answer, found in the same pass but not to be used
        /// before the verdict: the valid keys, revised keys and dropped ones, or the first key's and
        /// revised key's decoding failure (keys first, as `check` reads them).
        var checked: (keys: Int, revisedKeys: Int, dropped: Int)
        var keyFailure: KeyFileError?
        var revisedKeyFailure: KeyFileError?

        /// The check's answer.
        package func check() throws(KeyFileError) -> (keys: Int, revisedKeys: Int, dropped: Int) {
            if let keyFailure { throw keyFailure }
            if let revisedKeyFailure { throw revisedKeyFailure }
            return checked
        }
    }

    /// Reads export.bin once: header fields, key messages counted, digests computed on the way.
    package static func judge(_ entries: KeyFileEntries, digests: Set<ECDSADigest>) throws(KeyFileError) -> Judged {
        var streams = [DigestStream]()
        for digest in digests {
            do {
                streams.append(try DigestStream(digest))
            } catch {
                throw .archive("cannot hash export.bin: \(error)")
            }
        }
        let wire = try WireStream(entries.exportBinaryStream()) { bytes in
            for stream in streams { stream.update(bytes) }
        }
        var header = KeyExport(batchNumber: 0, batchSize: 0, hasBatchNumber: false, hasBatchSize: false)
        var counts = (keys: 0, revised: 0)
        var checked = (keys: 0, revisedKeys: 0, dropped: 0)
        var failures: (keys: KeyFileError?, revised: KeyFileError?) = (nil, nil)
        var body = [UInt8]()
        try wire.run { () throws(WireReader.Failure) in
            while let (field, type) = try wire.tag() {
                switch (field, type) {
                case (1, .fixed64): header.startTimestamp = try wire.fixed64()
                case (2, .fixed64): header.endTimestamp = try wire.fixed64()
                case (3, .lengthDelimited): header.region = try wire.string("region", limit: KeyFileLimits.maximumHeaderStringBytes)
                case (4, .varint):
                    header.batchNumber = Int32(truncatingIfNeeded: try wire.varint())
                    header.hasBatchNumber = true
                case (5, .varint):
                    header.batchSize = Int32(truncatingIfNeeded: try wire.varint())
                    header.hasBatchSize = true
                case (6, .lengthDelimited):
                    guard header.signatureInfos.count < KeyFileLimits.maximumSignatureInfos else {
                        throw WireReader.Failure(reason: "more than \(KeyFileLimits.maximumSignatureInfos) signature infos, over the limit")
                    }
                    let body = try wire.message("a signature info")
                    header.signatureInfos.append(try ExportReader.signatureInfo(body, 0..<body.count))
                case (7, .lengthDelimited), (8, .lengthDelimited):
                    let total = counts.keys + counts.revised + 1
                    guard total <= KeyFileLimits.maximumKeys else { throw WireReader.Failure(reason: "", tooManyKeys: total) }
                    if field == 7 { counts.keys += 1 } else { counts.revised += 1 }
                    try wire.message(field == 8 ? "revised key \(total - 1)" : "key \(total - 1)", into: &body)
                    // Validated and counted now, kept nowhere: the answer waits for the verdict.
                    let index = field == 7 ? counts.keys - 1 : counts.revised - 1
                    guard (field == 7 ? failures.keys : failures.revised) == nil else { continue }
                    do throws(WireReader.Failure) {
                        switch ExportBinary.validate(try RawKey(body, 0..<body.count)) {
                        case .success: if field == 7 { checked.keys += 1 } else { checked.revisedKeys += 1 }
                        case .failure: checked.dropped += 1
                        }
                    } catch {
                        let failure = KeyFileError.malformed("export.bin: \(field == 8 ? "revised key" : "key") \(index): \(error.reason)")
                        if field == 7 { failures.keys = failure } else { failures.revised = failure }
                    }
                default:
                    try wire.skip(field, type)
                }
            }
        }
        var hashes = [ECDSADigest: [UInt8]]()
        for stream in streams { hashes[stream.digest] = stream.finish() }
        return Judged(
            header: header, keyMessages: counts.keys, revisedKeyMessages: counts.revised, hashes: hashes, checked: checked,
            keyFailure: failures.keys, revisedKeyFailure: failures.revised)
    }

    /// The keys (or revised keys) of export.bin, read from the entry again, one at a time, each
    /// validated as `KeyStream` validates it.
    package static func keys(_ entries: KeyFileEntries, revised: Bool = false) throws(KeyFileError) -> StreamedKeys {
        StreamedKeys(wire: try WireStream(entries.exportBinaryStream(), observe: nil), field: revised ? 8 : 7)
    }
}

/// The keys of one kind of a streamed export.bin; invalid ones are dropped and counted, the first
/// `KeyFileLimits.maximumDroppedReasons` with their reason.
package final class StreamedKeys {
    private let wire: WireStream
    private let field: UInt32
    /// The current key message's bytes, reused from key to key.
    private var body = [UInt8]()
    /// Key messages of this kind read so far, valid or not.
    package private(set) var read = 0
    package private(set) var droppedCount = 0
    package private(set) var dropped: [DroppedKey] = []

    fileprivate init(wire: WireStream, field: UInt32) {
        self.wire = wire
        self.field = field
    }

    /// The next valid key; nil at the end of the file.
    package func next() throws(KeyFileError) -> DiagnosisKey? {
        var found: DiagnosisKey?
        try wire.run { () throws(WireReader.Failure) in
            while found == nil, let (field, type) = try wire.tag() {
                guard field == self.field, type == .lengthDelimited else {
                    try wire.skip(field, type)
                    continue
                }
                read += 1
                try wire.message(field == 8 ? "revised key \(read - 1)" : "key \(read - 1)", into: &body)
                do throws(WireReader.Failure) {
                    switch ExportBinary.validate(try RawKey(body, 0..<body.count)) {
                    case .success(let key):
                        found = key
                    case .failure(let invalid):
                        droppedCount += 1
                        if dropped.count < KeyFileLimits.maximumDroppedReasons {
                            dropped.append(DroppedKey(index: read - 1, revised: field == 8, reason: invalid.text))
                        }
                    }
                } catch {
                    throw WireReader.Failure(reason: "\(field == 8 ? "revised key" : "key") \(read - 1): \(error.reason)")
                }
            }
        }
        return found
    }
}

/// The protobuf wire format over a stream, read through a window: tags, varints and fixed fields
/// at the top level, a length-delimited message handed out whole only within
/// `KeyFileLimits.maximumMessageBytes`, anything else skipped without being held. Every byte read
/// from the entry is shown to `observe` once (the digests).
final class WireStream {
    static let window = 256 << 10

    private let source: EntryStream
    private let observe: ((UnsafeRawBufferPointer) -> Void)?
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var sourceEnded = false
    /// An archive fault met while refilling, kept to be thrown as itself (not as malformed protobuf).
    private var archiveFault: KeyFileError?
    private var headerChecked = false

    init(_ source: EntryStream, observe: ((UnsafeRawBufferPointer) -> Void)?) throws(KeyFileError) {
        self.source = source
        self.observe = observe
        buffer = .allocate(byteCount: Self.window, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// Runs `body` over the stream, checking the 16-byte header first; wire failures become
    /// `malformed`, a key count over the limit `tooManyKeys`, archive faults themselves.
    func run(_ body: () throws(WireReader.Failure) -> Void) throws(KeyFileError) {
        do {
            if !headerChecked {
                let count = ExportBinary.header.count
                guard try fill(count), UnsafeRawBufferPointer(rebasing: buffer[start..<(start + count)]).elementsEqual(ExportBinary.header) else {
                    // A stream that fails at the header is read to its end first, as the file in
                    // memory would have been inflated whole: its CRC and limits speak first.
                    try? drain()
                    throw archiveFault ?? KeyFileError.badHeader
                }
                start += count
                headerChecked = true
            }
            try body()
        } catch let error as KeyFileError {
            throw error
        } catch let failure as WireReader.Failure {
            if let archiveFault { throw archiveFault }
            if let tooMany = failure.tooManyKeys { throw .tooManyKeys(tooMany) }
            // As in memory: the entry's own faults (CRC, limits) before the protobuf's.
            try? drain()
            if let archiveFault { throw archiveFault }
            throw .malformed("export.bin: \(failure.reason)")
        } catch {
            throw .malformed("export.bin: \(error)")
        }
    }

    /// Makes `count` bytes available from `start`; false if the entry ends first.
    private func fill(_ count: Int) throws(WireReader.Failure) -> Bool {
        while end - start < count && !sourceEnded {
            if start > 0 && Self.window - end < EntryStream.chunk {
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
                end -= start
                start = 0
            }
            let read: Int
            do {
                read = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end..<Self.window]))
            } catch {
                archiveFault = error
                throw .truncated
            }
            if read == 0 {
                sourceEnded = true
            } else {
                observe?(UnsafeRawBufferPointer(rebasing: buffer[end..<(end + read)]))
                end += read
            }
        }
        return end - start >= count
    }

    /// Reads the rest of the entry, so that its CRC and limits are checked.
    private func drain() throws(WireReader.Failure) {
        start = end
        while !sourceEnded { _ = try fill(Self.window); start = end }
    }

    func tag() throws(WireReader.Failure) -> (UInt32, WireReader.Wire)? {
        guard try fill(1) else { return nil }
        let value = try varint()
        guard value < UInt64(UInt32.max), value >> 3 >= 1, let wire = WireReader.Wire(rawValue: UInt8(value & 7)) else { throw .malformed }
        return (UInt32(value >> 3), wire)
    }

    func varint() throws(WireReader.Failure) -> UInt64 {
        guard try fill(1) else { throw .truncated }
        _ = try fill(10)
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard start < end, shift <= 63 else { throw .malformed }
            let byte = buffer[start]
            start += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    func fixed64() throws(WireReader.Failure) -> UInt64 {
        guard try fill(8) else { throw .truncated }
        var value: UInt64 = 0
        for offset in (0..<8).reversed() { value = value << 8 | UInt64(buffer[start + offset]) }
        start += 8
        return value
    }

    private func length() throws(WireReader.Failure) -> Int {
        let length = try varint()
        guard length < 0x7FFF_FFFF else { throw .malformed }
        return Int(length)
    }

    /// A length-delimited message, whole, within `KeyFileLimits.maximumMessageBytes`.
    func message(_ what: String) throws(WireReader.Failure) -> [UInt8] {
        var bytes = [UInt8]()
        try message(what, into: &bytes)
        return bytes
    }

    /// A message into `bytes` (emptied first, its capacity kept): a key a time without an
    /// allocation each.
    func message(_ what: String, into bytes: inout [UInt8]) throws(WireReader.Failure) {
        let count = try length()
        guard count <= KeyFileLimits.maximumMessageBytes else { throw .oversized(what, count) }
        guard try fill(count) else { throw .truncated }
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + count)]))
        start += count
    }

    func string(_ name: String, limit: Int) throws(WireReader.Failure) -> String {
        let count = try length()
        guard try fill(min(count, limit + 1)) else { throw .truncated }
        guard count <= limit else {
            // As in memory, a string past the end is truncation, whatever its length.
            try advance(count)
            throw WireReader.Failure(reason: "\(name) is \(count) bytes, over the limit of \(limit)")
        }
        defer { start += count }
        guard let text = String(validating: buffer[start..<(start + count)], as: UTF8.self) else {
            throw WireReader.Failure(reason: "\(name) is not UTF-8")
        }
        return text
    }

    /// Skips the value of a field whose tag was just read, checking its encoding.
    func skip(_ field: UInt32, _ wire: WireReader.Wire, depth: Int = 1) throws(WireReader.Failure) {
        switch wire {
        case .varint: _ = try varint()
        case .fixed64: try advance(8)
        case .fixed32: try advance(4)
        case .lengthDelimited: try advance(try length())
        case .endGroup: throw .truncated
        case .startGroup:
            guard depth < 100 else { throw .malformed }
            while true {
                guard let inner = try tag() else { throw .truncated }
                if inner.1 == .endGroup {
                    guard inner.0 == field else { throw .malformed }
                    return
                }
                try skip(inner.0, inner.1, depth: depth + 1)
            }
        }
    }

    /// Passes over `count` bytes, refilling as it goes; nothing of them is kept.
    private func advance(_ count: Int) throws(WireReader.Failure) {
        var left = count
        while left > 0 {
            guard try fill(1) else { throw .truncated }
            let step = min(left, end - start)
            start += step
            left -= step
        }
    }
}
