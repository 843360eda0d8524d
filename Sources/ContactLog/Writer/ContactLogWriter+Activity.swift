// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Logging
import Storage

extension ContactLogWriter {
    /// What the daemon's API shows of the log: when the last window ended, and the aggregates filed
    /// under today since the writer opened (plus today's segment as found at open).
    package struct Activity: Sendable, Equatable {
        package var lastWindowEnd: UnixTime?
        package var aggregatesToday: Int
    }

    package func activity() -> Activity {
        let today = UTCDay(containing: clock.now())
        return Activity(lastWindowEnd: lastWindowEnd, aggregatesToday: todayCount.day == today ? todayCount.count : 0)
    }

    /// Deletes every segment (ResetAllData). The writer stays open and starts a new segment with
    /// the next window.
    package func eraseAll() throws(ContactLogError) {
        segments.removeAll()
        unsynced.removeAll()
        for (_, name) in try Self.segmentFiles(in: directory) {
            do {
                try AtomicFile.remove(directory.path(of: name))
            } catch {
                throw .storage(error)
            }
        }
        lastWindowEnd = nil
        todayCount = (UTCDay(containing: clock.now()), 0)
        logger.notice("contact log erased")
    }
}
