// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// Everything gaenctl prints goes through here: this `print` stands in for the standard library's
/// in the whole module, and escapes every control character but a line feed and a tab
/// (`OutsideText.terminalSafe`). A key server's index line, error code or a key file's region
/// reaches gaenctl through gaend's properties and errors; quoted raw, 71 characters of escape
/// sequences cleared the owner's screen and hid the exposure days under `gaenctl status` (issue
/// 53). JSON output is unchanged in meaning: its serializer already escapes C0, and the `\u009b`
/// written for a C1 character is JSON's own escape of it.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(OutsideText.terminalSafe(text), terminator: terminator)
}
