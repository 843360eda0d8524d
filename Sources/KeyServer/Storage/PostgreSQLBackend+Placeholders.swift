// SPDX-License-Identifier: GPL-3.0-or-later

extension PostgreSQLBackend {
    /// `sql` with SQLite's `?N` placeholders written as PostgreSQL's `$N`, outside string
    /// literals, quoted identifiers and comments. A `?` without digits is left alone (PostgreSQL
    /// uses it in some operators).
    static func dollarPlaceholders(_ sql: String) -> String {
        var output = ""
        output.reserveCapacity(sql.utf8.count)
        var characters = sql[...]
        while let character = characters.popFirst() {
            output.append(character)
            switch character {
            case "'", "\"":
                // Up to and including the closing quote; a doubled quote reopens at once.
                let body = characters.prefix { $0 != character }
                output += body
                characters = characters[body.endIndex...]
                if let closing = characters.popFirst() { output.append(closing) }
            case "-" where characters.first == "-":
                let comment = characters.prefix { !$0.isNewline }
                output += comment
                characters = characters[comment.endIndex...]
            case "/" where characters.first == "*":
                let end = characters.dropFirst().firstRange(of: "*/")?.upperBound ?? characters.endIndex
                output += characters[..<end]
                characters = characters[end...]
            case "?" where characters.first.map { ("0"..."9").contains($0) } == true:
                output.removeLast()
                output.append("$")
            default:
                break
            }
        }
        return output
    }
}
