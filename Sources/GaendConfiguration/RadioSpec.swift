// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Where the radio is, as `--radio` names it (DESIGN.md, "Radio spec").
package enum RadioSpec: Hashable, Sendable, CustomStringConvertible {
    /// `hci:hciN`: the kernel's HCI user channel on controller N (the adapter must be down in BlueZ).
    case kernel(index: UInt16)
    /// `bluez:hciN`: BlueZ over D-Bus.
    case bluez(index: UInt16)
    /// `h4:/dev/ttyX[@baud]`: a UART controller.
    case serial(path: String, baud: Int)
    /// `h4+unix:PATH`: an H4 byte stream on a unix socket (test controllers).
    case unix(path: String)
    /// `h4+tcp:HOST:PORT`: an H4 byte stream over TCP (remote controllers).
    case tcp(host: String, port: UInt16)
    /// `none`: no radio.
    case none

    package static let defaultBaud = 115_200
    static let bauds: Set<Int> = [9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 500_000, 921_600, 1_000_000, 2_000_000, 3_000_000]

    /// Parses a `--radio` value; the error says what a valid one looks like.
    package init(parsing text: String) throws(RadioSpecError) {
        func index(_ name: Substring) throws(RadioSpecError) -> UInt16 {
            guard name.hasPrefix("hci"), let value = UInt16(name.dropFirst(3)), value < 64 else {
                throw RadioSpecError(text: text, problem: "'\(name)' is not a controller name like hci0")
            }
            return value
        }
        if text == "none" {
            self = .none
        } else if text.hasPrefix("hci:") {
            self = .kernel(index: try index(text.dropFirst(4)))
        } else if text.hasPrefix("bluez:") {
            self = .bluez(index: try index(text.dropFirst(6)))
        } else if text.hasPrefix("h4+unix:") {
            let path = String(text.dropFirst(8))
            guard !path.isEmpty else { throw RadioSpecError(text: text, problem: "no socket path") }
            self = .unix(path: path)
        } else if text.hasPrefix("h4+tcp:") {
            let rest = text.dropFirst(7)
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]), port > 0,
                colon > rest.startIndex
            else {
                throw RadioSpecError(text: text, problem: "expected h4+tcp:HOST:PORT")
            }
            self = .tcp(host: String(rest[..<colon]).trimmingCharacters(in: "[]"), port: port)
        } else if text.hasPrefix("h4:") {
            let rest = text.dropFirst(3)
            let parts = rest.split(separator: "@", maxSplits: 1)
            guard let path = parts.first, path.hasPrefix("/") else { throw RadioSpecError(text: text, problem: "expected h4:/dev/ttyX[@baud]") }
            var baud = Self.defaultBaud
            if parts.count == 2 {
                guard let value = Int(parts[1]), Self.bauds.contains(value) else {
                    throw RadioSpecError(
                        text: text, problem: "'\(parts[1])' is not a supported baud rate (\(Self.bauds.sorted().map(String.init).joined(separator: ", ")))")
                }
                baud = value
            }
            self = .serial(path: String(path), baud: baud)
        } else {
            throw RadioSpecError(text: text, problem: "expected hci:hciN, bluez:hciN, h4:/dev/ttyX[@baud], h4+unix:PATH, h4+tcp:HOST:PORT or none")
        }
    }

    package var description: String {
        switch self {
        case .kernel(let index): return "hci:hci\(index)"
        case .bluez(let index): return "bluez:hci\(index)"
        case .serial(let path, let baud): return "h4:\(path)@\(baud)"
        case .unix(let path): return "h4+unix:\(path)"
        case .tcp(let host, let port): return "h4+tcp:\(host):\(port)"
        case .none: return "none"
        }
    }
}

package struct RadioSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    package var text: String
    package var problem: String
    package var description: String { "--radio '\(text)': \(problem)" }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        return String(self.drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
