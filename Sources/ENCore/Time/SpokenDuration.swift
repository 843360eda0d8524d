// SPDX-License-Identifier: GPL-3.0-or-later

/// A duration as a person reads it in a status line: `850 ms`, `12 s`, `45 min`, `3 h 12 min`,
/// `400 d 2 h` (the two largest units past two minutes). One spelling for the daemon's reasons
/// and gaenctl's lines.
public enum SpokenDuration {
    public static func of(milliseconds: Int64) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds < 120_000 { return "\(milliseconds / 1000) s" }
        let minutes = milliseconds / 60_000
        if minutes >= 1440 { return "\(minutes / 1440) d \(minutes % 1440 / 60) h" }
        if minutes >= 60 { return "\(minutes / 60) h \(minutes % 60) min" }
        return "\(minutes) min"
    }
}
