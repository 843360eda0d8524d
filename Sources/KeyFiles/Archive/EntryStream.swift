// SPDX-License-Identifier: GPL-3.0-or-later

internal import CInflate

/// One zip entry's contents as a stream: read from the archive 64 KiB of input at a time, inflated
/// (raw deflate) or copied (stored) into the caller's buffer, with the CRC-32 computed on the way
/// and checked at the end against the central directory's. `check` sees the output grow and may
/// refuse it (the size and bomb-ratio limits). ZIPFoundation's loop asked for an output chunk as
/// large as the compressed entry; this holds two 64 KiB buffers, whatever the entry's size
/// (docs/key-files.md, "Memory").
final class EntryStream {
    static let chunk = 64 << 10

    private let archive: ArchiveBytes
    private let path: String
    private let data: Range<Int>
    private let deflated: Bool
    private let expectedCRC: UInt32
    private let check: (Int) -> KeyFileError?
    private var stream = z_stream()
    private var input: UnsafeMutableRawBufferPointer
    private var nextInput: Int
    private var crc: uLong = crc32(0, nil, 0)
    private var ended = false
    private(set) var produced = 0

    init(archive: ArchiveBytes, path: String, data: Range<Int>, deflated: Bool, crc: UInt32, check: @escaping (Int) -> KeyFileError?) throws(KeyFileError) {
        self.archive = archive
        self.path = path
        self.data = data
        self.deflated = deflated
        expectedCRC = crc
        self.check = check
        nextInput = data.lowerBound
        input = .allocate(byteCount: Self.chunk, alignment: 16)
        // Negative window bits: a raw deflate stream, as zip entries carry (no zlib header).
        if deflated, inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) != Z_OK {
            input.deallocate()
            throw .archive("\(path) cannot be inflated: inflateInit2 failed")
        }
    }

    deinit {
        if deflated { inflateEnd(&stream) }
        input.deallocate()
    }

    /// Fills `buffer` from the entry; 0 at its end (when the CRC has been checked).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(KeyFileError) -> Int {
        guard !ended, buffer.count > 0 else { return 0 }
        let count = deflated ? try inflate(into: buffer) : try copy(into: buffer)
        if count > 0 {
            crc = crc32(crc, buffer.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(count))
            produced += count
            if let refusal = check(produced) { throw refusal }
            return count
        }
        ended = true
        guard UInt32(crc) == expectedCRC else { throw .archive("\(path) does not match its CRC-32: damaged") }
        return 0
    }

    /// The whole rest of the entry (export.sig, and tools that show a file whole).
    func readAll(reserving expected: Int) throws(KeyFileError) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(expected)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return output }
            output.append(contentsOf: buffer[0..<count])
        }
    }

    private func copy(into buffer: UnsafeMutableRawBufferPointer) throws(KeyFileError) -> Int {
        let count = min(buffer.count, data.upperBound - nextInput)
        guard count > 0 else { return 0 }
        let read = try archive.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), at: nextInput)
        guard read == count else { throw .archive("the file shrank while it was read") }
        nextInput += count
        return count
    }

    private func inflate(into buffer: UnsafeMutableRawBufferPointer) throws(KeyFileError) -> Int {
        stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.count)
        while stream.avail_out == uInt(buffer.count) {
            if stream.avail_in == 0 && nextInput < data.upperBound {
                let count = min(Self.chunk, data.upperBound - nextInput)
                let read = try archive.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<count]), at: nextInput)
                guard read == count else { throw .archive("the file shrank while it was read") }
                nextInput += count
                stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(count)
            }
            let status = CInflate.inflate(&stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                return buffer.count - Int(stream.avail_out)
            case Z_OK:
                // No progress with no input left is a stream that cannot go on.
                if stream.avail_in == 0 && nextInput >= data.upperBound && stream.avail_out == uInt(buffer.count) {
                    throw .archive("\(path) cannot be inflated: the deflate stream is cut short")
                }
            case Z_BUF_ERROR:
                if stream.avail_in == 0 && nextInput >= data.upperBound {
                    throw .archive("\(path) cannot be inflated: the deflate stream is cut short")
                }
            default:
                throw .archive("\(path) cannot be inflated: \(stream.msg.map { String(cString: $0) } ?? "zlib error \(status)")")
            }
        }
        return buffer.count - Int(stream.avail_out)
    }
}
