// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ContactLog
import Daemon
import OwnerSignals
import ENCore
import Foundation
import GaendAPI
import GaendTestSupport
import KeySchedule
import Logging
import GaendConfiguration
import Storage
import Testing

/// The status LED in process, on a directory shaped like /sys/class/leds: the pattern of each
/// state, written only when it changes, and what the LED showed before put back at stop.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct IndicatorTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func eachStateHasItsPattern() {
        #expect(IndicatorPattern.of(status: .active, exposed: false) == .onAir)
        #expect(IndicatorPattern.of(status: .scanning, exposed: false) == .waitingForClock)
        #expect(IndicatorPattern.of(status: .bluetoothOff, exposed: true) == .exposed)
        for status in [Manager1.Status.disabled, .bluetoothOff, .paused, .unknown] {
            #expect(IndicatorPattern.of(status: status, exposed: false) == .off)
        }
        #expect(IndicatorPattern.onAir.setting == LEDSetting(trigger: "timer", delayOn: 50, delayOff: 2950))
        #expect(IndicatorPattern.off.setting == LEDSetting(trigger: "none", brightness: 0))
    }

    static func attribute(_ led: String, _ name: String) -> String {
        ((try? String(contentsOfFile: led + "/" + name, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theLEDFollowsTheStatusAndIsGivenBackAtStop() async throws {
        let directory = try TemporaryDirectory()
        let led = directory.path + "/leds/ACT"
        try FileManager.default.createDirectory(atPath: led, withIntermediateDirectories: true)
        for (name, value) in [("trigger", "none timer [mmc0] heartbeat\n"), ("brightness", "0\n"), ("delay_on", "500\n"), ("delay_off", "500\n")] {
            try value.write(toFile: led + "/" + name, atomically: false, encoding: .utf8)
        }
        let data = DataDirectory(path: directory.path + "/data")
        let wall = ManualClock(UnixTime.vectorDay.adding(seconds: 10 * 3600))
        let keys = try KeySchedule(dataDirectory: data, clock: wall, logger: quiet)
        let log = try ContactLogWriter(dataDirectory: data, clock: wall, logger: quiet)
        let status = RadioStatusBoard(logger: quiet)
        let gate = EnablementGate(enabled: false)
        var settings = Manager.Settings()
        settings.radio = .kernel(index: 0)
        let manager = try Manager(
            dataDirectory: data, keys: keys, log: log, worker: nil, radioStatus: status, gate: gate, settings: settings, clock: wall, logger: quiet)
        let service = IndicatorService(
            led: SysfsLED(name: "ACT", root: directory.path + "/leds", logger: quiet), source: manager, ticks: TestClock(), logger: quiet)
        let running = taskOnOwnThreads { try await service.run() }

        // Not enabled: off.
        await until { Self.attribute(led, "trigger") == "none" && Self.attribute(led, "brightness") == "0" }
        // Enabled and on the air: the short blink.
        try await manager.setEnabled(true)
        status.set(.active)
        await until { Self.attribute(led, "trigger") == "timer" && Self.attribute(led, "delay_off") == "2950" }
        #expect(Self.attribute(led, "delay_on") == "50")
        // Waiting for the clock.
        wall.distrust("the clock is not synchronized")
        status.set(.starting)
        await until { Self.attribute(led, "delay_off") == "9950" }
        // The radio gone: off.
        wall.distrust(nil)
        status.set(.bluetoothOff, reason: "the controller is unreachable")
        await until { Self.attribute(led, "trigger") == "none" && Self.attribute(led, "brightness") == "0" }

        running.cancel()
        _ = try? await running.value
        #expect(Self.attribute(led, "trigger") == "mmc0", "the trigger found at start is put back")
    }

    /// A retry after udev was slow must not select the running trigger again: the kernel would stop
    /// it and make root's delay files anew (found in the VM stage, where no retry ever succeeded).
    @Test func aRunningTriggerIsNotSelectedAgain() throws {
        let directory = try TemporaryDirectory()
        let led = directory.path + "/leds/ACT"
        try FileManager.default.createDirectory(atPath: led, withIntermediateDirectories: true)
        for (name, value) in [("trigger", "none [timer] heartbeat\n"), ("brightness", "1\n"), ("delay_on", "500\n"), ("delay_off", "500\n")] {
            try value.write(toFile: led + "/" + name, atomically: false, encoding: .utf8)
        }
        let sysfs = SysfsLED(name: "ACT", root: directory.path + "/leds", logger: quiet)
        #expect(sysfs.apply(IndicatorPattern.exposed.setting))
        #expect(Self.attribute(led, "trigger") == "none [timer] heartbeat", "the running trigger is left running")
        #expect(Self.attribute(led, "delay_on") == "100" && Self.attribute(led, "delay_off") == "100")
        #expect(sysfs.apply(IndicatorPattern.off.setting))
        #expect(Self.attribute(led, "trigger") == "none" && Self.attribute(led, "brightness") == "0")
    }

    @Test func aMissingLEDIsAWarningOnceAndNothingElse() async throws {
        let directory = try TemporaryDirectory()
        let led = SysfsLED(name: "absent", root: directory.path, logger: quiet)
        led.rememberPrevious()
        led.apply(IndicatorPattern.onAir.setting)
        led.restore()
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/absent"))
    }
}
