// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import Testing

/// The beacon's decisions over bluetoothd, without a bus: what the bus, bluetoothd, the owner and
/// the beacon's faults do in, actions out.
@Suite struct BlueZBeaconMachineTests {
    /// A machine on an open system bus, bluetoothd not yet seen.
    static func connected(enabled: Bool = true, adapter: String = "hci0") -> BeaconMachine {
        var machine = BeaconMachine(backend: .bluez(adapter: adapter))
        #expect(machine.handle(.enabled(enabled)) == [.connect])
        #expect(machine.handle(.connected) == [.reportOff(reason: "bluetoothd is not on the system bus")])
        return machine
    }

    /// A machine that runs the beacon: enabled, bluetoothd present, its adapter powered.
    static func running() -> BeaconMachine {
        var machine = connected()
        _ = machine.handle(.ownerChanged(":1.7"))
        let actions = machine.handle(.adapterRead(present: true, powered: true))
        #expect(actions == [.reportStarting, .startBeacon])
        #expect(machine.running)
        return machine
    }

    @Test func startsOnceEveryConditionHolds() {
        var machine = Self.connected()
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
        var idle = Self.connected(adapter: "hci1")
        #expect(idle.handle(.released) == [.forgetRegistrations, .reportOff(reason: "bluetoothd is not on the system bus")])
    }

    @Test func shutdownEndsAndALostBusIsConnectedAgain() {
        var machine = Self.running()
        #expect(machine.handle(.shutdown) == [.finish, .disconnect, .end])
        #expect(machine.handle(.powered(false)) == [])
        var lost = Self.running()
        #expect(lost.handle(.lost) == [.stopBeacon, .disconnect, .reportOff(reason: "the system bus went away"), .wait(.seconds(1), for: .reconnect)])
        // News of the closed bus is stale; the next bus starts from nothing known.
        #expect(lost.handle(.ownerChanged(":1.7")) == [])
        #expect(lost.handle(.waited(.reconnect)) == [.connect])
        #expect(lost.handle(.unreachable) == [.reportOff(reason: "the system bus is unreachable"), .wait(.seconds(2), for: .reconnect)])
        #expect(lost.handle(.waited(.reconnect)) == [.connect])
        #expect(lost.handle(.connected) == [.reportOff(reason: "bluetoothd is not on the system bus")])
        #expect(lost.handle(.ownerChanged(":1.7")) == [.forgetRegistrations, .readAdapter])
        #expect(lost.handle(.adapterRead(present: true, powered: true)) == [.reportStarting, .startBeacon])
        // Disabled, the bus stays: the status still follows the adapter.
        var idle = Self.connected(enabled: false)
        #expect(idle.handle(.lost) == [.disconnect, .reportOff(reason: "the system bus went away"), .wait(.seconds(1), for: .reconnect)])
        #expect(idle.handle(.waited(.reconnect)) == [.connect])
    }

    @Test func aFaultStopsAndRestartsAfterTheBackoffUnlessTheAdapterWentMeanwhile() {
        var machine = Self.running()
        #expect(machine.handle(.advertising) == [.reportActive])
        #expect(
            machine.handle(.fault("bluetoothd refused the advertisement", at: .seconds(10)))
                == [.stopBeacon, .reportStarting, .wait(.seconds(1), for: .restart(after: "bluetoothd refused the advertisement"))])
        // Nothing starts during the wait, whatever comes.
        #expect(machine.handle(.powered(true)) == [])
        // A wait for something else does not end it.
        #expect(machine.handle(.waited(.reconnect)) == [])
        #expect(machine.handle(.waited(.restart(after: "bluetoothd refused the advertisement"))) == [.reportStarting, .startBeacon])
        #expect(machine.handle(.fault("again", at: .seconds(12))) == [.stopBeacon, .reportStarting, .wait(.seconds(2), for: .restart(after: "again"))])
        #expect(machine.handle(.powered(false)) == [.reportOff(reason: "adapter hci0 is powered off")])
        #expect(machine.handle(.waited(.restart(after: "again"))) == [.reportOff(reason: "adapter hci0 is powered off")])
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
            #expect(machine.handle(.waited(.reconnect)) == [.connect])
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
            #expect(machine.handle(.waited(.restart(after: "refused"))) == [.reportStarting, .startBeacon])
            actions = machine.handle(.fault("refused", at: .seconds(Int64(at))))
            #expect(actions.last == .wait(.seconds(wait), for: .restart(after: "refused")))
        }
        #expect(machine.handle(.waited(.restart(after: "refused"))) == [.reportStarting, .startBeacon])
        // A minute without a fault: 1 s again.
        #expect(machine.handle(.fault("refused", at: .seconds(167))).last == .wait(.seconds(1), for: .restart(after: "refused")))
    }

    @Test func aLostControllerIsReconnectedAfterOneSecond() {
        var machine = Self.running()
        #expect(machine.handle(.lost) == [.stopBeacon, .disconnect, .reportStarting, .wait(.seconds(1), for: .reconnect)])
        // The end of the transport it closed is no news.
        #expect(machine.handle(.lost) == [])
        #expect(machine.handle(.waited(.reconnect)) == [.connect])
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
        #expect(waiting.handle(.waited(.reconnect)) == [])
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
