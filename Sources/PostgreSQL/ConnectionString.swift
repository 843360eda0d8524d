// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Keeps passwords out of error messages. libpq quotes the whole URI in some of its complaints
/// about a malformed one (an unexpected character, an unterminated IPv6 address), and those
/// messages go to the operator's terminal and the journal.
package enum ConnectionString {
    /// `message` with every password written in `connectionString` replaced by `***`.
    package static func redacting(_ message: String, of connectionString: String) -> String {
        var text = message
        for secret in passwords(in: connectionString) {
            text = text.replacing(secret, with: "***")
        }
        return text
    }

    /// The passwords a connection string carries, as written and percent-decoded: a URI's
    /// `user:password@`, and any `password=` (a URI's query parameter or a keyword's value,
    /// possibly single-quoted).
    static func passwords(in connectionString: String) -> [String] {
        var found = [Substring]()
        if let scheme = connectionString.range(of: "://") {
            let authority = connectionString[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                found.append(authority[authority.index(after: colon)..<at])
            }
        }
        var rest = connectionString[...]
        while let keyword = rest.range(of: "password") {
            rest = rest[keyword.upperBound...].drop { $0 == " " }
            guard rest.first == "=" else { continue }
            rest = rest.dropFirst().drop { $0 == " " }
            if rest.first == "'" {
                // Keyword values may be quoted, with \' and \\ escaped.
                var end = rest.index(after: rest.startIndex)
                while end < rest.endIndex, rest[end] != "'" {
                    end = rest.index(end, offsetBy: rest[end] == "\\" ? 2 : 1, limitedBy: rest.endIndex) ?? rest.endIndex
                }
                found.append(rest[rest.index(after: rest.startIndex)..<end])
                rest = rest[end...]
            } else {
                let value = rest.prefix { $0 != " " && $0 != "&" }
                found.append(value)
                rest = rest[value.endIndex...]
            }
        }
        let secrets = found.filter { !$0.isEmpty }.map(String.init)
        return Array(Set(secrets + secrets.compactMap(\.removingPercentEncoding))).sorted { $0.count > $1.count }
    }
}
