// SPDX-License-Identifier: GPL-3.0-or-later

import ClockTrust
import Conditions
import GaendTestSupport
import ENCore
import Testing

struct ClockJudgeTests {
    static let now = UnixTime(seconds: 1_790_000_000)

    @Test func synchronizedNeedsTheKernelAndSystemDoesNot() {
        let synchronized = ClockJudge(policy: .synchronized)
        #expect(synchronized.verdict(wall: Self.now, boot: 0, kernelSynchronized: false).distrust == "the clock is not synchronized")
        #expect(synchronized.verdict(wall: Self.now, boot: 0, kernelSynchronized: true).trusted)
        let system = ClockJudge(policy: .system)
        #expect(system.verdict(wall: Self.now, boot: 0, kernelSynchronized: false).trusted)
    }

    @Test func aWitnessMoreThanTwoHoursApartTakesTrustAwayUntilOneAgrees() {
        var judge = ClockJudge(policy: .system)
        // The server is 3 h 12 min ahead: our clock is behind.
        let behind = Int64(3 * 3600 + 12 * 60) * 1000
        judge.witnessed(server: UnixTime(milliseconds: Self.now.milliseconds + behind), boot: 1000)
        let verdict = judge.verdict(wall: Self.now, boot: 1000, kernelSynchronized: true)
        #expect(verdict.distrust == "the clock is 3 h 12 min behind the key server")
        #expect(verdict.offsetMilliseconds == behind)
        #expect(verdict.witnesses == 1)
        // Exactly two hours is within GAEN's tolerance.
        judge.witnessed(server: UnixTime(milliseconds: Self.now.milliseconds - 2 * 3_600_000), boot: 1000)
        #expect(judge.verdict(wall: Self.now, boot: 1000, kernelSynchronized: true).trusted)
        judge.witnessed(server: UnixTime(milliseconds: Self.now.milliseconds - 2 * 3_600_000 - 1), boot: 1000)
        #expect(judge.verdict(wall: Self.now, boot: 1000, kernelSynchronized: true).distrust == "the clock is 2 h 0 min ahead of the key server")
        judge.witnessed(server: Self.now, boot: 1000)
        #expect(judge.verdict(wall: Self.now, boot: 1000, kernelSynchronized: true).trusted)
    }

    @Test func aStepAfterTheWitnessIsJudgedOnTheBootClock() {
        var judge = ClockJudge(policy: .synchronized)
        judge.witnessed(server: Self.now, boot: 10_000)
        // An hour later (boot clock) the wall clock was set 400 days ahead.
        let later = Self.now.milliseconds + 3_600_000
        let stepped = UnixTime(milliseconds: later + 400 * 86_400_000)
        let verdict = judge.verdict(wall: stepped, boot: 10_000 + 3_600_000, kernelSynchronized: true)
        #expect(verdict.distrust == "the clock is 400 d 0 h ahead of the key server")
        #expect(verdict.offsetMilliseconds == -400 * 86_400_000)
        #expect(judge.verdict(wall: UnixTime(milliseconds: later), boot: 10_000 + 3_600_000, kernelSynchronized: true).offsetMilliseconds == 0)
    }

    @Test func spokenDurations() {
        #expect(SpokenDuration.of(milliseconds: 45 * 60_000 + 59_999) == "45 min")
        #expect(SpokenDuration.of(milliseconds: 3 * 3_600_000) == "3 h 0 min")
        #expect(SpokenDuration.of(milliseconds: 26 * 3_600_000) == "1 d 2 h")
        #expect(SpokenDuration.of(milliseconds: 850) == "850 ms")
        #expect(SpokenDuration.of(milliseconds: 119_999) == "119 s")
    }
}

struct ClockTrustBoardTests {
    @Test func trustGainedAndLostSignalsChangesAndShifts() async {
        let readings = ManualClockReadings(wall: ClockJudgeTests.now, synchronized: false)
        let board = ClockTrustBoard(policy: .synchronized, readings: readings)
        #expect(board.distrust == ClockJudge.notSynchronized)
        var shifts = board.shifts.updates().makeAsyncIterator()
        var changes = board.changes.updates().makeAsyncIterator()
        _ = await shifts.next()
        _ = await changes.next()
        // Nothing changed: no signal (the next signal is the one below).
        board.reevaluate()
        readings.synchronize(true)
        #expect(board.distrust == ClockJudge.notSynchronized, "the verdict stands until judged again")
        #expect(board.reevaluate().trusted)
        #expect(board.distrust == nil)
        #expect(await shifts.next() != nil)
        #expect(await changes.next() != nil)
        readings.synchronize(false)
        #expect(!board.reevaluate().trusted)
        #expect(await shifts.next() != nil)
    }

    @Test func aStepShiftsTheBeaconEvenWhenTrustStays() async {
        let readings = ManualClockReadings(wall: ClockJudgeTests.now, synchronized: true)
        let board = ClockTrustBoard(policy: .synchronized, readings: readings)
        var shifts = board.shifts.updates().makeAsyncIterator()
        _ = await shifts.next()
        readings.step(milliseconds: 30_000)
        #expect(board.stepped().trusted)
        #expect(board.steps == 1)
        #expect(await shifts.next() != nil)
        #expect(board.bootToWall() == ClockJudgeTests.now.milliseconds + 30_000 - readings.boot())
    }

    @Test func theServersDateWitnessesEveryAnswer() {
        let readings = ManualClockReadings(wall: ClockJudgeTests.now, synchronized: true)
        let board = ClockTrustBoard(policy: .synchronized, readings: readings)
        let verdict = board.witnessed(server: ClockJudgeTests.now.adding(seconds: -3 * 3600))
        #expect(verdict.distrust == "the clock is 3 h 0 min ahead of the key server")
        #expect(board.verdict.offsetMilliseconds == -3 * 3_600_000)
        // Steps of the wall clock back by 3 h (a time daemon corrects it): trusted again.
        readings.step(milliseconds: -3 * 3_600_000)
        #expect(board.stepped().trusted)
    }
}
