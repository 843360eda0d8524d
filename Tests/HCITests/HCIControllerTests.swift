// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCore
import HCI
import Logging
import Testing
import GaendConfiguration

// The time limit: a command that never reaches the scripted controller would otherwise wait for
// the 3,600 s command timeout of `aVanishedControllerFailsThePendingCommand` (it hung a sanitizer
// run once), and a failure names the test where a hang names nothing.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct HCIControllerTests {
    let quiet = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
    /// For tests whose controller answers: the 2 s default is a real-time limit, and a machine
    /// busy with sanitizers let the scripted answers come later than that. The timeout itself is
    /// tested with an injected sleep, not by waiting.
    static let patient = Duration.seconds(60)

    /// The error a command ends with, or nil when it succeeds.
    static func failure(of command: HCICommand, on driver: HCIController) async -> HCIControllerError? {
        do {
            try await driver.send(command)
            return nil
        } catch {
            return error
        }
    }

    @Test func initializationLearnsTheController() async throws {
        let controller = try ScriptedController(script: ScriptedController.standard)
        let driver = HCIController(transport: controller.transport, commandTimeout: Self.patient, logger: quiet)
        async let reading: Void = driver.run()
        let info = try await driver.initialize()
        #expect(info.hciVersion == 0x0B)
        #expect(info.manufacturer == 0x005F)
        #expect(info.advertisingTxPower == -7)
        #expect(info.supportsExtendedAdvertising)
        #expect(
            controller.commands.map(\.opcode) == [
                .reset, .readLocalVersionInformation, .setEventMask, .leSetEventMask, .leReadLocalSupportedFeatures, .leReadAdvertisingChannelTxPower,
            ])
        controller.transport.close()
        await reading
    }

    @Test func statusCodesBecomeTypedErrors() async throws {
        let controller = try ScriptedController { command in
            command.opcode == .leSetRandomAddress
                ? [ScriptedController.complete(command.opcode, status: 0x0C)]
                : [[0x04, 0x0F, 0x04, 0x12, 0x01, UInt8(command.opcode.rawValue & 0xFF), UInt8(command.opcode.rawValue >> 8)]]
        }
        let driver = HCIController(transport: controller.transport, commandTimeout: Self.patient, logger: quiet)
        async let reading: Void = driver.run()
        let address = BluetoothAddress([0x3A, 0x5B, 0x7C, 0x9D, 0x1E, 0x2F])!
        await #expect(throws: HCIControllerError.status(.commandDisallowed, .leSetRandomAddress)) {
            try await driver.send(.leSetRandomAddress(address))
        }
        await #expect(throws: HCIControllerError.status(.invalidParameters, .leSetAdvertisingEnable)) {
            try await driver.send(.leSetAdvertisingEnable(true))
        }
        controller.transport.close()
        await reading
    }

    @Test func aSilentControllerTimesOutAndTheNextCommandStillWorks() async throws {
        let controller = try ScriptedController { command in
            command.opcode == .leSetScanEnable ? [] : [ScriptedController.complete(command.opcode)]
        }
        // The timeout "passes" as soon as it is asked for: no test waits for real time.
        let driver = HCIController(transport: controller.transport, clock: RecordingClock(), logger: quiet)
        async let reading: Void = driver.run()
        await #expect(throws: HCIControllerError.timeout(.leSetScanEnable)) {
            try await driver.send(.leSetScanEnable(true, filterDuplicates: false))
        }
        controller.transport.close()
        await reading
    }

    @Test func reportsArriveAndMalformedEventsAreSkipped() async throws {
        let controller = try ScriptedController(script: ScriptedController.standard)
        let driver = HCIController(transport: controller.transport, commandTimeout: Self.patient, logger: quiet)
        async let reading: Void = driver.run()
        let rpi = "8be6cd371c5c891604bfbe49df845096"
        let good = try Hex.decode("043e28020102012f1e9d7c5b3a1c03036ffd17166ffd" + rpi + "72033874c4")
        // Before any scan a report belongs to none: counted, not queued.
        controller.write(good)
        // (A command's completion comes after what the controller sent before it.)
        try await driver.send(.readLocalVersionInformation)
        #expect(await driver.reportsOutsideScans == 1)
        try await driver.send(.leSetScanEnable(true, filterDuplicates: false))
        controller.write([0x04, 0x3E, 0x03, 0x02, 0x05, 0x00])  // a report event that lies about its count
        controller.write([0x04, 0x3E, 0x0C, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, 0x1F, 0])  // data cut short
        controller.write(good)
        var iterator = driver.reports.makeAsyncIterator()
        let report = try #require(await iterator.next())
        #expect(report.rssi == -60)
        #expect(try ExposureNotificationPayload(parsing: report.data)?.rpi.description == rpi)
        #expect(await driver.malformedEvents == 2)
        // The disable's completion tells how many were queued before it; later ones are counted.
        let completion = try await driver.sendMarked(.leSetScanEnable(false, filterDuplicates: false))
        #expect(completion.reportsBefore == 1)
        controller.write(good)
        try await driver.send(.readLocalVersionInformation)
        #expect(await driver.reportsOutsideScans == 2)
        #expect(await driver.reportsQueued == 1)
        controller.transport.close()
        await reading
    }

    @Test func hardwareErrorsFailThePendingCommandAndAreAnnounced() async throws {
        // The controller answers every command with a Hardware Error event (code 0x42) instead.
        let controller = try ScriptedController { _ in [[0x04, 0x10, 0x01, 0x42]] }
        let driver = HCIController(transport: controller.transport, commandTimeout: .seconds(3600), logger: quiet)
        async let reading: Void = driver.run()
        #expect(await Self.failure(of: .reset, on: driver) == .hardwareError(0x42))
        var events = driver.hardwareErrorEvents.makeAsyncIterator()
        #expect(await events.next() == 1)
        // One with no command pending is announced too, with the next count.
        controller.write([0x04, 0x10, 0x01, 0x07])
        #expect(await events.next() == 2)
        #expect(await driver.hardwareErrors == 2)
        controller.transport.close()
        await reading
        #expect(await events.next() == nil)
    }

    @Test func aVanishedControllerFailsThePendingCommand() async throws {
        // The controller hangs up when the command arrives, instead of answering it.
        let controller = try ScriptedController(hangUpOn: .reset) { _ in [] }
        let driver = HCIController(transport: controller.transport, commandTimeout: .seconds(3600), logger: quiet)
        async let reading: Void = driver.run()
        #expect(await Self.failure(of: .reset, on: driver) == .closed)
        await reading
        #expect(await Self.failure(of: .reset, on: driver) == .closed)
    }

    @Test func radioSpecs() throws {
        #expect(try RadioSpec(parsing: "hci:hci0") == .kernel(index: 0))
        #expect(try RadioSpec(parsing: "bluez:hci1") == .bluez(index: 1))
        #expect(try RadioSpec(parsing: "h4:/dev/ttyAMA0") == .serial(path: "/dev/ttyAMA0", baud: 115_200))
        #expect(try RadioSpec(parsing: "h4:/dev/ttyUSB0@1000000") == .serial(path: "/dev/ttyUSB0", baud: 1_000_000))
        #expect(try RadioSpec(parsing: "h4+unix:/run/c0.sock") == .unix(path: "/run/c0.sock"))
        #expect(try RadioSpec(parsing: "h4+tcp:127.0.0.1:9000") == .tcp(host: "127.0.0.1", port: 9000))
        #expect(try RadioSpec(parsing: "h4+tcp:[::1]:9000") == .tcp(host: "::1", port: 9000))
        #expect(try RadioSpec(parsing: "none") == .none)
        for bad in ["hci:eth0", "h4:/dev/ttyS0@12345", "h4+tcp:host", "h4+unix:", "usb:0", "hci:hci99"] {
            #expect(throws: RadioSpecError.self) { try RadioSpec(parsing: bad) }
        }
        #expect("\(try #require(try? RadioSpec(parsing: "h4:/dev/ttyS0")))" == "h4:/dev/ttyS0@115200")
    }
}
