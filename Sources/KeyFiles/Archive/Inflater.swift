// SPDX-License-Identifier: GPL-3.0-or-later

internal import CInflate

/// Inflates one raw-deflate zip entry straight from the archive's bytes into its output, 64 KiB
/// at a time, with its CRC-32 computed on the way. ZIPFoundation's loop asked for an output chunk
/// as large as the compressed entry (16 MiB at most) besides the output itself; this keeps the
/// worst key file the limits let through inside the daemon's 100 MB (docs/key-files.md, "Memory").
enum Inflater {
    enum Failure: Error {
        /// zlib's message, or what was wrong with the stream.
        case stream(String)
        /// `check` refused the output at this size.
        case refused(KeyFileError)
    }

    static let chunk = 64 << 10

    /// The inflated bytes of `input` and their CRC-32. `check` sees the output grow.
    static func inflate(
        _ input: UnsafeRawBufferPointer, reserving expected: Int, check: (Int) -> KeyFileError?
    ) throws(Failure) -> (bytes: [UInt8], crc32: UInt32) {
        var stream = z_stream()
        // Negative window bits: a raw deflate stream, as zip entries carry (no zlib header).
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .stream("inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        output.reserveCapacity(expected)
        var crc = crc32(0, nil, 0)
        var buffer = [UInt8](repeating: 0, count: chunk)
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        while true {
            let status = buffer.withUnsafeMutableBytes { out -> Int32 in
                stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                let status = CInflate.inflate(&stream, Z_NO_FLUSH)
                let produced = out.count - Int(stream.avail_out)
                if produced > 0 {
                    crc = crc32(crc, out.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(produced))
                    output.append(contentsOf: out[0..<produced])
                }
                return status
            }
            if let refusal = check(output.count) { throw .refused(refusal) }
            switch status {
            case Z_STREAM_END:
                return (output, UInt32(crc))
            case Z_OK:
                // No progress with input left is a stream that cannot go on.
                if stream.avail_in == 0 && stream.avail_out != 0 { throw .stream("the deflate stream is cut short") }
            case Z_BUF_ERROR:
                throw .stream("the deflate stream is cut short")
            default:
                throw .stream(stream.msg.map { String(cString: $0) } ?? "zlib error \(status)")
            }
        }
    }
}
