// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Foundation
import GaendAPI

/// The one shape every `--json` output has (docs/json.md, the schemas in docs/schemas/): member
/// names in snake_case, whatever the name is elsewhere (a D-Bus property `LastScanTime`, a
/// configuration key `scan-window`); times as unix seconds; `null`, never a placeholder string,
/// for what is not there.
enum JSONShape {
    /// `LastScanTime` → `last_scan_time`, `RPIInterval` → `rpi_interval`, `scan-window` →
    /// `scan_window`.
    static func name(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character == "-" || character == " " {
                result.append("_")
                continue
            }
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                // A word starts at a capital after a small letter or digit, or at the last capital
                // of an acronym followed by a small letter (RPI|Interval).
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) { result.append("_") }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }

    /// Manager1's properties as JSON: snake_case names, times as unix seconds or `null` for never,
    /// `null` for a text or an interval that is not there.
    static func properties(_ properties: [String: DBusValue]) -> [String: Any] {
        var object: [String: Any] = [:]
        for (key, value) in properties {
            object[name(key)] = Manager1.Property(rawValue: key).map { self.value(value, of: $0) } ?? Output.plain(value)
        }
        return object
    }

    static func value(_ value: DBusValue, of property: Manager1.Property) -> Any {
        switch value {
        case .uint64(0) where property.signature == "t": NSNull()
        case .uint32(0) where property == .rpiInterval: NSNull()
        case .string("") where property != .status: NSNull()
        default: Output.plain(value)
        }
    }

    /// A dictionary whose keys are D-Bus names (a test result's `TestDate`), with snake_case keys.
    static func renamed(_ dictionary: [String: Any]) -> [String: Any] {
        Dictionary(uniqueKeysWithValues: dictionary.map { (name($0.key), $0.value) })
    }
}
