// SPDX-License-Identifier: GPL-3.0-or-later

/// What checks that export.bin's decoder does not depend on where its input is cut (the
/// `export-bin` fuzz target, KeyFilesTests): a buffer fed in chunks of chosen sizes, and all that
/// a reading tells, as text to compare.
extension ExportInput {
    /// `bytes` fed a chunk at a time, each of the size `nextSize` gives (at least 1 byte).
    package convenience init(_ bytes: [UInt8], chunks nextSize: @escaping () -> Int) {
        var offset = 0
        self.init(read: { buffer in
            let count = min(max(nextSize(), 1), buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
            offset += count
            return count
        })
    }
}

extension ExportBinary {
    /// The summary (header, counts, check) of one reading of `input()`, then each kind of key read
    /// as a stream from another (keys, dropped reasons), or the error each met.
    package static func transcript(_ input: () throws(KeyFileError) -> ExportInput) -> String {
        var text: String
        do {
            let summary = try ExportSummary(reading: input())
            text = "\(summary.header) \(summary.keyMessages) \(summary.revisedKeyMessages) \(Result { () throws(KeyFileError) in try summary.check() })"
        } catch {
            return "\(error)"
        }
        for revised in [false, true] {
            do {
                let keys = KeyStream(try input(), revised: revised)
                var read = [DiagnosisKey]()
                while let key = try keys.next() { read.append(key) }
                text += " \(read) \(keys.droppedCount) \(keys.dropped)"
            } catch {
                text += " \(error)"
            }
        }
        return text
    }
}
