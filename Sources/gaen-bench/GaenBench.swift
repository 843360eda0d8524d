// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser

/// `gaen-bench`: benchmarks that print figures. Tests assert behaviour; this measures speed.
/// Run it in release mode: `swift run -c release gaen-bench crypto`.
@main
struct GaenBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gaen-bench",
        abstract: "Print throughput figures for gaend's hot paths.",
        subcommands: [
            CryptoBench.self, LogBench.self, KeyFileBench.self, HostileKeyFileBench.self, MatchBench.self, DBusBench.self, KeyServerBench.self,
            KeyServerAttackBench.self, TracesBench.self, IdleBench.self, BusyDetectionBench.self, BusyFixtureCommand.self, ExportBench.self,
        ])
}
