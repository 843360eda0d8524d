// SPDX-License-Identifier: GPL-3.0-or-later

/// The keys (or revised keys) of an export.bin, one at a time in the file's order, each validated;
/// invalid ones are dropped and counted, the first `KeyFileLimits.maximumDroppedReasons` with their
/// reason. A file's keys need so never all be in memory: detection matches them a round at a time,
/// export.bin inflated again for each matching index, once the file's verdict is known.
package final class KeyStream {
    private let input: ExportInput
    private var tally: KeyTally

    package init(_ input: ExportInput, revised: Bool = false) {
        self.input = input
        tally = KeyTally(revised: revised)
    }

    /// The keys of an archive's export.bin, inflated from its entry as they are read.
    package convenience init(_ entries: KeyFileEntries, revised: Bool = false) throws(KeyFileError) {
        self.init(try entries.exportInput(), revised: revised)
    }

    /// Key messages of this kind read so far, valid or not.
    package var read: Int { tally.read }
    package var droppedCount: Int { tally.droppedCount }
    package var dropped: [DroppedKey] { tally.dropped }

    /// The next valid key; nil at the end of the file.
    package func next() throws(KeyFileError) -> DiagnosisKey? {
        while let message = try input.nextKey() {
            guard message.revised == tally.revised else { continue }
            do throws(KeyFileError) {
                if let key = try tally.take(message) { return key }
            } catch {
                throw input.drained(error)
            }
        }
        return nil
    }
}
