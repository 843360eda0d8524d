// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import KeyFiles
import Logging

/// A run's lines in the journal: counts only, never a key or an identifier. A failure at error
/// level; a run that refused files at warning, one line per refused file and one for the run, so
/// that `journalctl -p warning` names what was not checked (issue 46).
struct DetectionJournal {
    let logger: Logger

    func record(_ outcome: DetectionOutcome) {
        if let error = outcome.error {
            logger.error("exposure detection failed", metadata: ["error": "\(error)"])
            return
        }
        guard let result = outcome.result else { return }
        var metadata: Logger.Metadata = [
            "keys": "\(result.statistics.keys)", "matchedKeys": "\(result.statistics.matchedKeys)",
            "newResults": "\(result.statistics.newResults)", "revisions": "\(result.statistics.revisions)",
            "windows": "\(result.windows.count)", "exposedDays": "\(result.exposureDays.count)",
        ]
        guard let refusals = result.refusals else {
            logger.notice("exposure detection finished", metadata: metadata)
            return
        }
        for file in refusals.refused {
            logger.warning(
                "key file refused: its keys were not checked",
                metadata: ["file": "\(OutsideText.escaped(file.name))", "verdict": "\(file.verdict.name)", "reason": "\(file.verdict.reason ?? "")"])
        }
        metadata["refused"] = "\(refusals)"
        logger.warning("exposure detection finished, but not every key file was checked", metadata: metadata)
    }
}
