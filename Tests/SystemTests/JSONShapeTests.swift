// SPDX-License-Identifier: GPL-3.0-or-later

@testable import GaenCtlCommands
import GaendAPI
import Testing

/// One casing for every `--json` output (docs/json.md): snake_case from D-Bus and configuration
/// names alike, and the bar chart `heard` draws.
@Suite struct JSONShapeTests {
    @Test func namesBecomeSnakeCase() {
        #expect(JSONShape.name("LastScanTime") == "last_scan_time")
        #expect(JSONShape.name("RPIInterval") == "rpi_interval")
        #expect(JSONShape.name("Status") == "status")
        #expect(JSONShape.name("TestDate") == "test_date")
        #expect(JSONShape.name("Id") == "id")
        #expect(JSONShape.name("scan-window") == "scan_window")
        #expect(JSONShape.name("log-level") == "log_level")
        #expect(JSONShape.name("export-key") == "export_key")
        // Every property has a distinct JSON name.
        let names = Manager1.Property.allCases.map { JSONShape.name($0.rawValue) }
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "_" } })
    }

    @Test func barsAreScaledInEighths() {
        #expect(BarChart.bar(0, of: 10, width: 10) == "")
        #expect(BarChart.bar(10, of: 10, width: 10) == String(repeating: "█", count: 10))
        #expect(BarChart.bar(5, of: 10, width: 10) == String(repeating: "█", count: 5))
        // The smallest non-zero value still shows.
        #expect(BarChart.bar(1, of: 1000, width: 10) == "▏")
        #expect(BarChart.bar(1, of: 16, width: 10) == "▋")
        let lines = BarChart.lines(
            [BarChart.Row(label: "10:00", value: 3, note: "(2)"), BarChart.Row(label: "11:00", value: 12, note: "(10)")], width: 40)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("10:00  3 "))
        #expect(lines[1].hasPrefix("11:00 12 ████"))
        #expect(lines.allSatisfy { $0.count <= 40 })
    }

    @Test func spansAreBoundedToFourteenDays() {
        #expect(HeardCommand.seconds("30m") == 1800)
        #expect(HeardCommand.seconds("24h") == 86_400)
        #expect(HeardCommand.seconds("14d") == Int64(14 * 86_400))
        #expect(HeardCommand.seconds("15d") == nil)
        #expect(HeardCommand.seconds("0h") == nil)
        #expect(HeardCommand.seconds("-1h") == nil)
        #expect(HeardCommand.seconds("h") == nil)
        #expect(HeardCommand.seconds("9223372036854775807d") == nil)
        #expect(HeardCommand.seconds("1w") == nil)
    }
}
