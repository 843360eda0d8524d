// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import SystemCalls
package import Logging

/// One LED of the kernel's LED class (`/sys/class/leds/NAME`), driven through its triggers. A
/// missing LED or a write the kernel or the permissions refuse is a warning once, never a failure:
/// the LED is a courtesy, the beacon goes on without it.
package final class SysfsLED: @unchecked Sendable {
    // @unchecked: used by the indicator service's one task only.
    package let directory: String
    private let logger: Logger
    private var warned = false
    /// The trigger (and brightness) found at start, put back at stop.
    private var previous: LEDSetting?

    /// `root` is /sys/class/leds (a test's directory shaped like it).
    package init(name: String, root: String = "/sys/class/leds", logger: Logger) {
        directory = root + "/" + name
        self.logger = logger
    }

    /// The trigger the kernel runs now: the bracketed one of `trigger`'s list.
    package func currentTrigger() -> String? {
        guard let list = read("trigger") else { return nil }
        guard let open = list.firstIndex(of: "["), let close = list[open...].firstIndex(of: "]") else { return nil }
        return String(list[list.index(after: open)..<close])
    }

    /// Remembers what the LED showed before gaend, once.
    package func rememberPrevious() {
        guard previous == nil else { return }
        guard let trigger = currentTrigger() else {
            warnOnce("the indicator LED cannot be read; it is left alone", path: directory + "/trigger")
            return
        }
        previous = LEDSetting(trigger: trigger, brightness: trigger == "none" ? read("brightness").flatMap { Int($0) } : nil)
    }

    /// Shows `setting`: the trigger first (it creates the timer's attributes), then its values.
    /// Returns false when the trigger took but a value did not: the kernel has just made the
    /// timer's files, root's until udev gives them to group gaend (60-gaend-indicator-led.rules),
    /// so the caller tries the values again shortly; `quietly` keeps that first refusal unsaid.
    /// A trigger already running is not written again: the kernel would stop it and make its
    /// files anew, root's again, and a retry would never find them given to the group.
    @discardableResult
    package func apply(_ setting: LEDSetting, quietly: Bool = false) -> Bool {
        if currentTrigger() != setting.trigger {
            guard write("trigger", setting.trigger) else { return true }
        }
        var complete = true
        if let delayOn = setting.delayOn { complete = write("delay_on", "\(delayOn)", quietly: quietly) && complete }
        if let delayOff = setting.delayOff { complete = write("delay_off", "\(delayOff)", quietly: quietly) && complete }
        if let brightness = setting.brightness { complete = write("brightness", "\(brightness)", quietly: quietly) && complete }
        return complete
    }

    /// Puts back what the LED showed before gaend (at stop).
    package func restore() {
        guard let previous else { return }
        apply(previous)
    }

    private func read(_ attribute: String) -> String? {
        (try? String(contentsOfFile: directory + "/" + attribute, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One write of the whole value, as sysfs wants it (`echo value > attribute`); false (and a
    /// warning once) when refused.
    private func write(_ attribute: String, _ value: String, quietly: Bool = false) -> Bool {
        let path = directory + "/" + attribute
        let file = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard file >= 0 else {
            if quietly { return false }
            warnOnce("the indicator LED cannot be written; the beacon goes on without it", path: path, error: String(cString: strerror(errno)))
            return false
        }
        defer { SystemCall.close(file) }
        let written = Array(value.utf8).withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(file, raw) } }
        if case .failure(let error) = written {
            if quietly { return false }
            warnOnce("the indicator LED refused a value; the beacon goes on without it", path: path, error: "\(error)")
            return false
        }
        return true
    }

    private func warnOnce(_ message: Logger.Message, path: String, error: String? = nil) {
        guard !warned else { return }
        warned = true
        var metadata: Logger.Metadata = ["path": "\(path)"]
        if let error { metadata["error"] = "\(error)" }
        logger.warning(message, metadata: metadata)
    }
}
