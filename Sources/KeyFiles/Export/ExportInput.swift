// SPDX-License-Identifier: GPL-3.0-or-later

/// export.bin's bytes fed to its decoder (`ExportDecoder`), for one reading of the file: a whole
/// buffer, fed once, or chunks read into a window as the decoder asks for more (a zip entry as it
/// inflates; tests and the fuzzer cut a buffer into chunks of their own). This is what
/// `NIOSingleStepByteToMessageProcessor` is to swift-nio's decoder: it keeps the bytes the decoder
/// has not used, and maps its failures to `KeyFileError`.
///
/// Every byte is shown to `observe` once, as it arrives (the digests the signatures need).
package final class ExportInput {
    /// The window a stream is read through: room for the largest item the decoder must see whole (a
    /// 64 KiB message with its tag and length) and for reads of a few entry chunks.
    static let window = 256 << 10

    package typealias Read = (UnsafeMutableRawBufferPointer) throws(KeyFileError) -> Int

    private var decoder = ExportDecoder()
    private let buffer: UnsafeMutableRawBufferPointer
    /// The bytes not yet used: `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    private var sourceEnded: Bool
    private let read: Read?
    private let observe: ((UnsafeRawBufferPointer) -> Void)?

    /// A whole export.bin, fed as one chunk (copied into the input's own buffer, which a window's
    /// bytes are read from alike).
    package init(_ bytes: [UInt8], observe: ((UnsafeRawBufferPointer) -> Void)? = nil) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        self.buffer = buffer
        end = bytes.count
        sourceEnded = true
        read = nil
        self.observe = observe
        observe?(UnsafeRawBufferPointer(rebasing: buffer[0..<end]))
    }

    /// An export.bin read a chunk at a time by `read`, which fills what it can of the buffer it is
    /// given and returns how much, 0 at the end.
    package init(observe: ((UnsafeRawBufferPointer) -> Void)? = nil, read: @escaping Read) {
        buffer = .allocate(byteCount: Self.window, alignment: 16)
        sourceEnded = false
        self.read = read
        self.observe = observe
    }

    deinit {
        buffer.deallocate()
    }

    /// The header fields read so far (all of them once `nextKey` returned nil).
    var header: KeyExport { decoder.header }
    var keyMessages: Int { decoder.keyMessages }
    var revisedKeyMessages: Int { decoder.revisedKeyMessages }

    /// The next key or revised key message, its body valid until the next call; nil at the end.
    func nextKey() throws(KeyFileError) -> ExportDecoder.KeyMessage? {
        while true {
            var cursor = WireCursor(UnsafeRawBufferPointer(rebasing: buffer[start..<end]), isComplete: sourceEnded)
            let step: ExportDecoder.Step
            do throws(WireError) {
                step = try decoder.decode(&cursor)
            } catch {
                throw failure(error)
            }
            start += cursor.position
            switch step {
            case .key(let message): return message
            case .end: return nil
            case .needMore: try refill()
            }
        }
    }

    /// `failure`, unless the source has a fault of its own further on: the rest is read first, so
    /// that a broken entry (its CRC, its limits) is named before the protobuf it broke, as when the
    /// entry is inflated whole before it is decoded.
    func drained(_ failure: KeyFileError) -> KeyFileError {
        do throws(KeyFileError) {
            while !sourceEnded {
                start = end
                try refill()
            }
        } catch {
            return error
        }
        return failure
    }

    private func failure(_ error: WireError) -> KeyFileError {
        switch error {
        // The key limit stops the reading at once, whatever follows.
        case .tooManyKeys(let count): .tooManyKeys(count)
        case .badHeader: drained(.badHeader)
        case .invalid(let reason): drained(.malformed("export.bin: \(reason)"))
        case .needMore: preconditionFailure("the decoder asks for more bytes by its step, never by throwing")
        }
    }

    /// Reads the next chunk after the bytes not yet used, moved to the front first: the decoder
    /// asks for more only when what is left is less than one item, which then always has room.
    private func refill() throws(KeyFileError) {
        guard let read, !sourceEnded else { preconditionFailure("the decoder asked for more after the last byte") }
        if start > 0 {
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            end -= start
            start = 0
        }
        precondition(end < buffer.count, "an item larger than the window")
        let count = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
        if count == 0 {
            sourceEnded = true
        } else {
            observe?(UnsafeRawBufferPointer(rebasing: buffer[end..<(end + count)]))
            end += count
        }
    }
}

extension KeyFileEntries {
    /// export.bin as the decoder's input, inflated from its entry through the window, under the
    /// entry limits.
    package func exportInput(observe: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(KeyFileError) -> ExportInput {
        let stream = try exportBinaryStream()
        return ExportInput(observe: observe, read: stream.read(into:))
    }
}
