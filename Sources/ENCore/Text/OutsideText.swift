// SPDX-License-Identifier: GPL-3.0-or-later

/// Text that came from outside (a key server's index or error code, a key file's region), made
/// safe to quote in an error, a log line or a terminal (issue 53: 71 characters of escape sequences
/// in an index line, quoted into LastDetectionError, cleared the owner's screen under `gaenctl
/// status` and hid the exposure days). C0 controls, DEL and C1 controls are written as `\u001b`,
/// which is also JSON's escape for the same character, so text escaped here stays valid (and the
/// same) inside a JSON string.
package enum OutsideText {
    /// Every control character escaped: for text quoted into one line.
    package static func escaped(_ text: String) -> String {
        escape(text) { _ in true }
    }

    /// Control characters escaped but a line feed and a tab: for what gaenctl prints, whose lines
    /// and columns are its own (journalctl and GNU ls escape the same way).
    package static func terminalSafe(_ text: String) -> String {
        escape(text) { $0 != 0x0A && $0 != 0x09 }
    }

    package static func isControl(_ value: UInt32) -> Bool {
        value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value)
    }

    private static func escape(_ text: String, _ shouldEscape: (UInt32) -> Bool) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0.value) && shouldEscape($0.value) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if isControl(value) && shouldEscape(value) {
                let hex = String(value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
