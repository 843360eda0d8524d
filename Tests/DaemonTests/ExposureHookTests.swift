// SPDX-License-Identifier: GPL-3.0-or-later

import Daemon
import Detection
import ENCore
import Foundation
import GaendTestSupport
import Logging
import Testing

/// The exposure hook in process: when it is due (pure), and the runner on real programs: the
/// variables and JSON it is given, one run at a time with the latest waiting, and the time limit
/// on a clock the test advances.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct ExposureHookTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
    static let day = UTCDay(daysSinceEpoch: 20_000)

    @Test func aNewDayTellsAndSoDoesTheLastAgeingOutButNothingElse() {
        var trigger = HookTrigger()
        #expect(trigger.consider([]) == nil)
        #expect(trigger.consider([Self.day])! == (.exposed, [Self.day]))
        // The same answer again (a run with nothing new): nothing.
        #expect(trigger.consider([Self.day]) == nil)
        // A second day: told, the new one named.
        let next = Self.day.advanced(by: 2)
        #expect(trigger.consider([Self.day, next])! == (.exposed, [next]))
        // The first ages out, one stays: nothing; the last ages out: cleared.
        #expect(trigger.consider([next]) == nil)
        #expect(trigger.consider([])! == (.cleared, []))
        #expect(trigger.consider([]) == nil)
        // A restart with the days told kept: the same day is not told again.
        var restarted = HookTrigger(told: [next])
        #expect(restarted.consider([next]) == nil)
    }

    static func script(_ directory: TemporaryDirectory, _ name: String, _ body: String) throws -> String {
        try directory.writeScript(name, body)
    }

    @Test func theProgramGetsOnlyItsVariablesAndTheAnswerOnStandardInput() async throws {
        let directory = try TemporaryDirectory()
        let report = directory.path + "/report"
        let program = try Self.script(directory, "hook", "env | sort > '\(report).env'\ncat > '\(report).json'\necho told the owner\necho second line")
        // The limit on a clock that never moves: under a sanitizer's load a quick program took seconds.
        let runner = ExposureHookRunner(settings: HookSettings(program: program, timeout: .seconds(30)), monotonic: TestClock(), logger: quiet)
        let answer = ExposureAnswer(days: [Self.day], lastExposure: Self.day.start.adding(seconds: 9 * 3600))
        await runner.submit(ExposureHookService.run(event: .exposed, answer: answer, newDays: [Self.day], now: Self.day.start.adding(seconds: 86_400)))
        await until { await runner.finished == 1 }
        let outcome = await runner.lastOutcome
        #expect(outcome == .exited(0, firstLine: "told the owner"), "\(String(describing: outcome))")
        let environment = try String(contentsOfFile: report + ".env", encoding: .utf8).split(separator: "\n").filter {
            // What /bin/sh itself sets.
            !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=")
        }
        #expect(
            environment == [
                "GAEND_CLASSIFICATION=", "GAEND_CLASSIFICATION_NAME=", "GAEND_EVENT=exposed", "GAEND_EXPOSURE_DAYS=\(Self.day)",
                "GAEND_LAST_EXPOSURE=\(Self.day.start.seconds + 9 * 3600)", "GAEND_NEW_DAYS=\(Self.day)",
            ])
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report + ".json"))) as? [String: Any]
        #expect(json?["event"] as? String == "exposed")
        #expect(json?["exposure_days"] as? [String] == [Self.day.description])
        #expect(json?["new_days"] as? [String] == [Self.day.description])
        #expect(json?["last_exposure"] as? Int64 == Self.day.start.seconds + 9 * 3600)
        #expect(json?["classification"] is NSNull)
    }

    @Test func aHangingProgramIsKilledAtItsLimitAndOnlyTheLatestWaits() async throws {
        let directory = try TemporaryDirectory()
        let runs = directory.path + "/runs"
        let program = try Self.script(directory, "hook", "echo \"$GAEND_NEW_DAYS\" >> '\(runs)'\nexec sleep 600")
        let limit = TestClock()
        let runner = ExposureHookRunner(settings: HookSettings(program: program, timeout: .seconds(30)), monotonic: limit, logger: quiet)
        func run(_ day: UTCDay) -> HookRun {
            ExposureHookService.run(event: .exposed, answer: ExposureAnswer(days: [day]), newDays: [day], now: day.start)
        }
        await runner.submit(run(Self.day))
        // Two more while it hangs: only the latest waits for it.
        await runner.submit(run(Self.day.advanced(by: 1)))
        await runner.submit(run(Self.day.advanced(by: 2)))
        await until { (try? String(contentsOfFile: runs, encoding: .utf8))?.isEmpty == false && limit.waiting == 1 }
        #expect(await runner.finished == 0)
        limit.advance(by: .seconds(30))
        await until { await runner.finished == 1 }
        #expect(await runner.lastOutcome == .killed(after: .seconds(30)))
        // The waiting one starts, and is killed in turn.
        await until { (try? String(contentsOfFile: runs, encoding: .utf8))?.split(separator: "\n").count == 2 && limit.waiting == 1 }
        limit.advance(by: .seconds(30))
        await until { await runner.finished == 2 }
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "\(Self.day)\n\(Self.day.advanced(by: 2))\n")
    }

    @Test func aProgramThatCannotRunIsSaidAndTheNextStillRuns() async throws {
        let directory = try TemporaryDirectory()
        let runner = ExposureHookRunner(
            settings: HookSettings(program: directory.path + "/missing", timeout: .seconds(5)), monotonic: TestClock(), logger: quiet)
        await runner.submit(ExposureHookService.run(event: .cleared, answer: ExposureAnswer(), newDays: [], now: Self.day.start))
        await until { await runner.finished == 1 }
        guard case .notStarted = await runner.lastOutcome else {
            Issue.record("\(String(describing: await runner.lastOutcome))")
            return
        }
        let program = try Self.script(directory, "fails", "echo no mail server >&2\nexit 3")
        await runner.configure(HookSettings(program: program, timeout: .seconds(5)))
        await runner.submit(ExposureHookService.run(event: .cleared, answer: ExposureAnswer(), newDays: [], now: Self.day.start))
        await until { await runner.finished == 2 }
        let outcome = await runner.lastOutcome
        #expect(outcome == .exited(3, firstLine: "no mail server"), "\(String(describing: outcome))")
    }
}
