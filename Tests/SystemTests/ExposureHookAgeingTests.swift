// SPDX-License-Identifier: GPL-3.0-or-later

import Daemon
import OwnerSignals
import Detection
import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Logging
import Storage
import SystemCalls
import Testing

/// The exposure hook across the midnight that ages the last exposure out, in process on a wall
/// clock and a sleep clock the test moves: a real detection finds a planted exposure, the hook is
/// told `exposed`, and it is told `cleared` by the service's own midnight look, not by a run.
@Suite(.ownThreads, .timeLimit(.minutes(2)))
struct ExposureHookAgeingTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func theMidnightThatAgesTheLastDayOutTellsTheHookOnce() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(data: data, pemPath: pem, tek: Bytes16(words: (0x2122_2324, 0x2526_2728)), day: day)
        defer { withExtendedLifetime(planted) {} }
        let wall = ManualClock(day.advanced(by: 2).start.adding(seconds: 12 * 3600))
        var downloader = KeyFileDownloader(
            indexURL: planted.server.baseURL + "/index.txt", baseURL: nil, transport: CurlTransport(),
            retryClock: RecordingClock())
        downloader.attempts = 1
        var v2 = V2Configuration()
        v2.infectiousnessForDaysSinceOnset = [0: .standard]
        let worker = DetectionWorker(
            dataDirectory: data, downloader: downloader,
            policy: SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: String(contentsOfFile: pem, encoding: .utf8))]),
            defaultConfiguration: ExposureConfiguration(v2: v2), clock: wall, timerClock: TestClock(), deadlineClock: TestClock(), logger: quiet)
        _ = try await worker.runNow()
        #expect(await worker.store.current().answer.days == [day])

        // The first midnight the day is no longer shown: 15 days on (docs/detection.md, "ageing":
        // windows more than 14 days before today are not shown).
        let probe = ManualClock(wall.now())
        var gone: UTCDay?
        for days in Int64(3)...20 {
            probe.set(day.advanced(by: days).start)
            let result = DetectionPipeline.score(await worker.store.results, configuration: await worker.store.configuration, now: probe.now())
            if ExposureAnswer(result.verdict).days.isEmpty {
                gone = day.advanced(by: days)
                break
            }
        }
        #expect(gone == day.advanced(by: 15))
        let clearedDay = try #require(gone)

        let runs = directory.path + "/runs"
        let hook = try directory.writeScript("hook", "echo \"$GAEND_EVENT|$GAEND_EXPOSURE_DAYS\" >> '\(runs)'\ncat >> '\(runs).json'")
        let runner = ExposureHookRunner(settings: HookSettings(program: hook, timeout: .seconds(30)), monotonic: TestClock(), logger: quiet)
        let midnights = TestClock()
        let service = ExposureHookService(worker: worker, runner: runner, clock: wall, monotonic: midnights, dataDirectory: data, logger: quiet)
        let running = taskOnOwnThreads { try await service.run() }
        await until { await runner.finished == 1 }
        #expect(Self.lines(runs) == ["exposed|\(day)"])

        // The last moment the day is shown: the look at that midnight tells nothing. Then the
        // midnight after: `cleared`, once, told at that midnight's time.
        for next in [clearedDay.advanced(by: -1), clearedDay] {
            await until { midnights.waiting == 1 }
            wall.set(next.start.adding(seconds: 1))
            midnights.advance(by: .seconds(25 * 3600))
        }
        await until { await runner.finished == 2 }
        #expect(Self.lines(runs) == ["exposed|\(day)", "cleared|"])
        let told = try #require(Self.lines(runs + ".json").last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(told["event"] as? String == "cleared")
        #expect(told["time"] as? Int64 == clearedDay.start.seconds + 1, "told by the midnight look of the day it aged out")
        // The told days are kept once the run exited 0: a restart tells nothing again.
        await until { (try? String(contentsOfFile: data.path(of: ExposureHookService.fileName), encoding: .utf8))?.contains("\"told\":[]") == true }
        running.cancel()
        _ = try? await running.value
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
