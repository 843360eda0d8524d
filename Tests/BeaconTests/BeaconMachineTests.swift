// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import Testing

/// The beacon's decisions over bluetoothd, without a bus: what bluetoothd, the owner and the
/// beacon's faults do in, actions out.
@Suite struct BlueZBeaconMachineTests {
    /// A machine that runs the beacon: enabled, bluetoothd present, its adapter powered.
    static func running() -> BeaconMachine {
        var machine = BeaconMachine(backend: .bluez(adapter: "hci0"))
        _ = machine.handle(.enabled(true))
        _ = machine.handle(.ownerChanged(":1.7"))
        let actions = machine.handle(.adapterRead(present: true, powered: true))
        #expect(actions == [.reportStarting, .startBeacon])
        #expect(machine.running)
        return machine
    }

    @Test func startsOnceEveryConditionHolds() {
        var machine = BeaconMachine(backend: .bluez(adapter: "hci0"))
        #expect(machine.handle(.enabled(true)) == [.reportOff(reason: "bluetoothd is not on the system bus")])
        // Nothing is decided while bluetoothd's objects are being read.
        #expect(machine.handle(.ownerChanged(":1.7")) == [.forgetRegistrations, .readAdapter])
        #expect(machine.handle(.adapterRead(present: true, powered: false)) == [.reportOff(reason: "adapter hci0 is powered off")])
        #expect(machine.handle(.powered(true)) == [.reportStarting, .startBeacon])
        // Started once: the same news again starts nothing more.
        #expect(machine.handle(.powered(true)) == [])
        #expect(machine.handle(.ownerChanged(":1.7")) == [])
    }

    @Test func disabledStopsAndSilencesWithoutChangingTheStatus() {
        var machine = Self.running()
        #expect(machine.handle(.enabled(false)) == [.stopBeacon, .silence])
        #expect(!machine.running)
        // Disabled, the adapter's loss is still reported, and nothing starts.
        #expect(machine.handle(.powered(false)) == [.reportOff(reason: "adapter hci0 is powered off")])
        #expect(machine.handle(.powered(true)) == [])
        #expect(machine.handle(.enabled(true)) == [.reportStarting, .startBeacon])
    }

    @Test func poweredOffOrRemovedStopsAndSaysWhy() {
        var machine = Self.running()
        #expect(machine.handle(.powered(false)) == [.stopBeacon, .reportOff(reason: "adapter hci0 is powered off")])
        #expect(machine.handle(.powered(true)) == [.reportStarting, .startBeacon])
        #expect(machine.handle(.adapterPresent(false)) == [.stopBeacon, .reportOff(reason: "adapter hci0 not found")])
        // A returning adapter is not powered until bluetoothd says so.
        #expect(machine.handle(.adapterPresent(true)) == [.reportOff(reason: "adapter hci0 is powered off")])
        #expect(machine.handle(.powered(true)) == [.reportStarting, .startBeacon])
    }

    @Test func aNewBluetoothdMeansRegisteringAgain() {
        var machine = Self.running()
        #expect(machine.handle(.ownerChanged(nil)) == [.stopBeacon, .forgetRegistrations, .reportOff(reason: "bluetoothd is not on the system bus")])
        #expect(machine.handle(.ownerChanged(":1.9")) == [.forgetRegistrations, .readAdapter])
        #expect(machine.handle(.adapterRead(present: true, powered: true)) == [.reportStarting, .startBeacon])
        // bluetoothd restarted between two signals: the old beacon stops before the new one starts.
        #expect(machine.handle(.ownerChanged(":1.12")) == [.stopBeacon, .forgetRegistrations, .readAdapter])
        #expect(machine.handle(.adapterUnreadable) == [.reportOff(reason: "adapter hci0 not found")])
    }

    @Test func releasedIsRegisteredAgain() {
        var machine = Self.running()
        #expect(machine.handle(.released) == [.forgetRegistrations, .stopBeacon, .reportStarting, .startBeacon])
        // Not running: nothing to stop, and the status says why.
        var idle = BeaconMachine(backend: .bluez(adapter: "hci1"))
        #expect(idle.handle(.released) == [.forgetRegistrations, .reportOff(reason: "bluetoothd is not on the system bus")])
    }

    @Test func shutdownAndTheBusLostEndTheConnection() {
        var machine = Self.running()
        #expect(machine.handle(.shutdown) == [.finish, .end])
        #expect(machine.handle(.powered(false)) == [])
        var lost = Self.running()
        #expect(lost.handle(.busLost) == [.stopBeacon, .reportOff(reason: "the system bus went away"), .end])
        #expect(lost.handle(.ownerChanged(":1.7")) == [])
        var idle = BeaconMachine(backend: .bluez(adapter: "hci0"))
        #expect(idle.handle(.busLost) == [.reportOff(reason: "the system bus went away"), .end])
    }

    @Test func aFaultStopsAndRestartsAfterTheBackoffUnlessTheAdapterWentMeanwhile() {
        var machine = Self.running()
        #expect(machine.handle(.advertising) == [.reportActive])
        #expect(
            machine.handle(.fault("bluetoothd refused the advertisement", at: .seconds(10)))
                == [.stopBeacon, .reportStarting, .wait(.seconds(1), for: .restart(after: "bluetoothd refused the advertisement"))])
        // Nothing starts during the wait, whatever comes.
        #expect(machine.handle(.powered(true)) == [])
        #expect(machine.handle(.waited) == [.reportStarting, .startBeacon])
        #expect(machine.handle(.fault("again", at: .seconds(12))) == [.stopBeacon, .reportStarting, .wait(.seconds(2), for: .restart(after: "again"))])
        #expect(machine.handle(.powered(false)) == [.reportOff(reason: "adapter hci0 is powered off")])
        #expect(machine.handle(.waited) == [.reportOff(reason: "adapter hci0 is powered off")])
    }
}

/// The beacon's decisions over an HCI controller: connecting, faults, losses, the owner's switch.
@Suite struct HCIBeaconMachineTests {
    /// A machine whose beacon runs on a connected controller.
    static func running() -> BeaconMachine {
        var machine = BeaconMachine(backend: .hci)
        #expect(machine.handle(.enabled(true)) == [.connect])
        #expect(machine.handle(.connected) == [.reportStarting, .startBeacon])
        #expect(machine.handle(.advertising) == [.reportActive])
        return machine
    }

    @Test func disabledAtStartItTouchesNothingUntilEnabled() {
        var machine = BeaconMachine(backend: .hci)
        #expect(machine.handle(.enabled(false)) == [])
        #expect(machine.handle(.enabled(true)) == [.connect])
        // Connecting: asking again connects nothing more.
        #expect(machine.handle(.enabled(true)) == [])
    }

    @Test func anUnreachableControllerIsTriedAfterOneTwoFourSecondsAndSaidSo() {
        var machine = BeaconMachine(backend: .hci)
        _ = machine.handle(.enabled(true))
        for wait in [1, 2, 4, 8, 16, 30, 30] {
            #expect(machine.handle(.unreachable) == [.reportOff(reason: "the controller is unreachable"), .wait(.seconds(wait), for: .reconnect)])
            #expect(machine.handle(.waited) == [.connect])
        }
        #expect(machine.handle(.connected) == [.reportStarting, .startBeacon])
    }

    @Test func faultsDoubleTheirWaitUntilAQuietMinute() {
        var machine = Self.running()
        var actions = machine.handle(.fault("refused", at: .seconds(100)))
        #expect(actions == [.stopBeacon, .reportStarting, .wait(.seconds(1), for: .restart(after: "refused"))])
        // A second report of the same fault (its event after the command it failed) changes nothing.
        #expect(machine.handle(.fault("the controller reported a hardware error", at: .seconds(100))) == [])
        for (at, wait) in [(101, 2), (103, 4), (107, 8)] {
            #expect(machine.handle(.waited) == [.reportStarting, .startBeacon])
            actions = machine.handle(.fault("refused", at: .seconds(Int64(at))))
            #expect(actions.last == .wait(.seconds(wait), for: .restart(after: "refused")))
        }
        #expect(machine.handle(.waited) == [.reportStarting, .startBeacon])
        // A minute without a fault: 1 s again.
        #expect(machine.handle(.fault("refused", at: .seconds(167))).last == .wait(.seconds(1), for: .restart(after: "refused")))
    }

    @Test func aLostControllerIsReconnectedAfterOneSecond() {
        var machine = Self.running()
        #expect(machine.handle(.lost) == [.stopBeacon, .disconnect, .reportStarting, .wait(.seconds(1), for: .reconnect)])
        // The end of the transport it closed is no news.
        #expect(machine.handle(.lost) == [])
        #expect(machine.handle(.waited) == [.connect])
        #expect(machine.handle(.connected) == [.reportStarting, .startBeacon])
        // Lost again after it worked: 1 s again, not 2.
        #expect(machine.handle(.lost).last == .wait(.seconds(1), for: .reconnect))
    }

    @Test func disablingLetsTheControllerGoAndEnablingTakesItBack() {
        var machine = Self.running()
        #expect(machine.handle(.enabled(false)) == [.finish, .disconnect])
        #expect(!machine.running && !machine.connected)
        #expect(machine.handle(.enabled(true)) == [.connect])
        // Disabled during a wait: the wait's end connects nothing.
        var waiting = Self.running()
        _ = waiting.handle(.lost)
        #expect(waiting.handle(.enabled(false)) == [])
        #expect(waiting.handle(.waited) == [])
        #expect(waiting.handle(.enabled(true)) == [.connect])
    }

    @Test func shutdownFinishesAndEnds() {
        var machine = Self.running()
        #expect(machine.handle(.shutdown) == [.finish, .disconnect, .end])
        #expect(machine.handle(.lost) == [])
        var idle = BeaconMachine(backend: .hci)
        #expect(idle.handle(.shutdown) == [.end])
    }
}
