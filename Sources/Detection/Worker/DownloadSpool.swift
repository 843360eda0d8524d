// SPDX-License-Identifier: GPL-3.0-or-later

import KeyFiles
import Storage

/// `<data-dir>/downloads/`: a run's key files between their download and their matching, so that
/// only the file being read is in memory (the daemon's budget is 100 MB at the peak, and a run may
/// bring many archives of up to 16 MiB). Emptied when the run ends, and at the start of the next
/// should a run have been killed.
struct DownloadSpool {
    let directory: DataDirectory
    private var count = 0

    init(dataDirectory: DataDirectory) throws(DetectionWorkerError) {
        directory = dataDirectory.subdirectory("downloads")
        do {
            _ = try directory.prepare()
        } catch {
            throw .storage(error)
        }
        clear()
    }

    /// Writes `bytes` to the spool; the source reads them back a range at a time, within the archive
    /// limit.
    mutating func keep(_ bytes: [UInt8], name: String) throws(DetectionWorkerError) -> KeyFileSource {
        count += 1
        let path = directory.path(of: "\(count).zip")
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw .storage(error)
        }
        return KeyFileSource(name: name, path: path)
    }

    /// Removes the spooled files (and nothing else: only names this type writes).
    func clear() {
        let names = (try? directory.entries()) ?? []
        for name in names where name.hasSuffix(".zip") && Int(name.dropLast(4)) != nil {
            try? AtomicFile.remove(directory.path(of: name))
        }
    }
}
