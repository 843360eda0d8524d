// SPDX-License-Identifier: GPL-3.0-or-later

import Daemon
import OwnerSignals
import Detection
import ENCore
import Foundation
import Glibc
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
        let outcome = await runner.run(
            ExposureHookService.run(event: .exposed, answer: answer, newDays: [Self.day], now: Self.day.start.adding(seconds: 86_400)))
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

    @Test func aHangingProgramIsKilledAtItsLimitWithWhatItStarted() async throws {
        let directory = try TemporaryDirectory()
        let child = directory.path + "/child"
        // A grandchild in the hook's group, and the hook itself hanging.
        let program = try Self.script(directory, "hook", "sleep 600 &\necho $! > '\(child)'\nexec sleep 600")
        let limit = TestClock()
        let runner = ExposureHookRunner(settings: HookSettings(program: program, timeout: .seconds(30)), monotonic: limit, logger: quiet)
        let running = Task {
            await runner.run(ExposureHookService.run(event: .exposed, answer: ExposureAnswer(days: [Self.day]), newDays: [Self.day], now: Self.day.start))
        }
        await until { (try? String(contentsOfFile: child, encoding: .utf8))?.isEmpty == false && limit.waiting == 1 }
        limit.advance(by: .seconds(30))
        #expect(await running.value == .killed(after: .seconds(30)))
        let grandchild = try #require(pid_t(try String(contentsOfFile: child, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Killed with the group: gone, or a zombie until whoever inherited it reaps it.
        await until { Self.isGone(grandchild) }
    }

    /// Issue 37: a stop (the run's task cancelled, as gaend's shutdown cancels the hook service)
    /// kills the program's group by PID and returns only once the program has ended and been
    /// reaped: no hook outlives gaend, not even as a zombie.
    @Test func aStopKillsTheRunningProgramAndAwaitsItsEnd() async throws {
        let directory = try TemporaryDirectory()
        let me = directory.path + "/me"
        let program = try Self.script(directory, "hook", "echo $$ > '\(me)'\nexec sleep 600")
        let limit = TestClock()
        let runner = ExposureHookRunner(settings: HookSettings(program: program, timeout: .seconds(30)), monotonic: limit, logger: quiet)
        let running = Task {
            await runner.run(ExposureHookService.run(event: .exposed, answer: ExposureAnswer(days: [Self.day]), newDays: [Self.day], now: Self.day.start))
        }
        await until { (try? String(contentsOfFile: me, encoding: .utf8))?.isEmpty == false && limit.waiting == 1 }
        let pid = try #require(pid_t(try String(contentsOfFile: me, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        running.cancel()
        #expect(await running.value == .signalled(SIGKILL, firstLine: ""))
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    static func isGone(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }

    /// Issue 40, item 13: the end is the hook's own exit, whatever it left behind. Before, a
    /// grandchild holding Foundation's termination socket delayed it (to the time limit, then
    /// logged as "ran past its time limit"), and one that kept writing spun the reader.
    @Test func whatTheProgramLeftBehindNeitherDelaysItsEndNorSpinsTheReader() async throws {
        let directory = try TemporaryDirectory()
        let group = directory.path + "/group"
        let program = try Self.script(
            directory, "hook", "echo told the owner\necho $$ > '\(group)'\nsleep 600 &\n(while :; do echo chatter; done) &\nexit 0")
        defer {
            if let text = try? String(contentsOfFile: group, encoding: .utf8), let leader = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(-leader, SIGKILL)
            }
        }
        let runner = ExposureHookRunner(settings: HookSettings(program: program, timeout: .seconds(600)), monotonic: TestClock(), logger: quiet)
        let started = ContinuousClock.now
        let outcome = await runner.run(
            ExposureHookService.run(event: .exposed, answer: ExposureAnswer(days: [Self.day]), newDays: [Self.day], now: Self.day.start))
        #expect(outcome == .exited(0, firstLine: "told the owner"), "\(outcome)")
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func aDecisionIsCommittedOnlyWhenTold() {
        var trigger = HookTrigger(told: [])
        let decided = trigger.decide([Self.day])
        #expect(decided?.event == .exposed)
        // Not told (the hook failed): the same news is decided again.
        #expect(trigger.decide([Self.day])?.newDays == [Self.day])
        trigger.commit([Self.day])
        #expect(trigger.decide([Self.day]) == nil)
        #expect(trigger.decide([])?.event == .cleared)
        // A failed run's news waits for its retry; other news does not.
        var retry = HookRetry()
        #expect(retry.failed([Self.day]) == .seconds(60))
        #expect(!retry.allows([Self.day]))
        #expect(retry.allows([Self.day, Self.day.advanced(by: 1)]))
        retry.due()
        #expect(retry.allows([Self.day]))
        #expect(retry.failed([Self.day]) == .seconds(120))
        #expect(retry.failed([Self.day]) == .seconds(240))
        retry.told()
        #expect(retry.failures == 0 && retry.allows([Self.day]))
        #expect(HookRetry.delay(afterFailures: 40) == .seconds(3600))
    }

    @Test func aProgramThatCannotRunIsSaidAndTheNextStillRuns() async throws {
        let directory = try TemporaryDirectory()
        let runner = ExposureHookRunner(
            settings: HookSettings(program: directory.path + "/missing", timeout: .seconds(5)), monotonic: TestClock(), logger: quiet)
        _ = await runner.run(ExposureHookService.run(event: .cleared, answer: ExposureAnswer(), newDays: [], now: Self.day.start))
        guard case .notStarted = await runner.lastOutcome else {
            Issue.record("\(String(describing: await runner.lastOutcome))")
            return
        }
        let program = try Self.script(directory, "fails", "echo no mail server >&2\nexit 3")
        await runner.configure(HookSettings(program: program, timeout: .seconds(5)))
        let outcome = await runner.run(ExposureHookService.run(event: .cleared, answer: ExposureAnswer(), newDays: [], now: Self.day.start))
        #expect(await runner.finished == 2)
        #expect(outcome == .exited(3, firstLine: "no mail server"), "\(String(describing: outcome))")
    }
}
