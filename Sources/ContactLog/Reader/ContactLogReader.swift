// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Storage

/// Reads a contact log without changing it: what the detection worker and the tools use, also while
/// the daemon is writing. A torn tail is reported, not cut: cutting is the writer's job.
package struct ContactLogReader: Sendable {
    package let directory: DataDirectory

    /// The log of a data directory (`<data-dir>/contacts`).
    package init(dataDirectory: DataDirectory) {
        directory = ContactLogWriter.contactsDirectory(in: dataDirectory)
    }

    /// The days that have a segment, oldest first. No `contacts/` directory means no days.
    package func days() throws(ContactLogError) -> [UTCDay] {
        try segmentFiles().map(\.0)
    }

    /// Every intact, in-day record of the days in `range` (all days if `nil`), in day order and, within
    /// a day, in the order written.
    ///
    /// - Returns: one report per segment read.
    @discardableResult
    package func forEachRecord(
        in range: ClosedRange<UTCDay>? = nil, _ body: (ContactLogRecord) -> Void
    ) throws(ContactLogError) -> [SegmentReport] {
        try forEachRawRecord(in: range) { record, day in
            if let decoded = try? RecordCodec.decode(record.raw, day: day) { body(decoded) }
        }
    }

    /// What `verify` reports: every segment's health and the names that are not segments.
    package struct Verification: Sendable {
        package var segments: [SegmentReport]
        /// Entries of `contacts/` that are neither segments nor the writer's lock: set-aside files and
        /// strangers, listed so an owner can see them.
        package var otherFiles: [String]

        /// Whether every segment is whole and clean.
        package var isIntact: Bool { segments.allSatisfy(\.isIntact) }
    }

    /// Checks every segment and record.
    package func verify() throws(ContactLogError) -> Verification {
        let segments = try forEachRawRecord(in: nil) { _, _ in }
        let names = try entries()
        let known = Set(segments.map { SegmentFormat.fileName(for: $0.day) } + [".lock"])
        return Verification(segments: segments, otherFiles: names.filter { !known.contains($0) })
    }

    // MARK: - Internal

    func forEachRawRecord(
        in range: ClosedRange<UTCDay>?, _ body: (SegmentReader.RawRecord, UTCDay) -> Void
    ) throws(ContactLogError) -> [SegmentReport] {
        var reports = [SegmentReport]()
        for (day, name) in try segmentFiles() where range?.contains(day) ?? true {
            reports.append(SegmentReader.scan(path: directory.path(of: name), day: day) { body($0, day) })
        }
        return reports
    }

    func segmentFiles() throws(ContactLogError) -> [(UTCDay, String)] {
        do {
            guard try directory.exists() else { return [] }
        } catch {
            throw .storage(error)
        }
        return try ContactLogWriter.segmentFiles(in: directory)
    }

    private func entries() throws(ContactLogError) -> [String] {
        do {
            guard try directory.exists() else { return [] }
            return try directory.entries()
        } catch {
            throw .storage(error)
        }
    }
}
