// SPDX-License-Identifier: GPL-3.0-or-later

import BlueZ
import Testing

/// The BlueZ back end's decisions without a bus: what bluetoothd and the owner do in, actions out.
@Suite struct AdapterMachineTests {
    /// A machine that runs the beacon: enabled, bluetoothd present, its adapter powered.
    static func running() -> AdapterMachine {
        var machine = AdapterMachine(adapterName: "hci0")
        _ = machine.handle(.enabled(true))
        _ = machine.handle(.ownerChanged(":1.7"))
        let actions = machine.handle(.adapterRead(present: true, powered: true))
        #expect(actions == [.reportStarting, .startBeacon])
        #expect(machine.running)
        return machine
    }

    @Test func startsOnceEveryConditionHolds() {
        var machine = AdapterMachine(adapterName: "hci0")
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
        var idle = AdapterMachine(adapterName: "hci1")
        #expect(idle.handle(.released) == [.forgetRegistrations, .reportOff(reason: "bluetoothd is not on the system bus")])
    }

    @Test func shutdownAndTheBusLostEndTheConnection() {
        var machine = Self.running()
        #expect(machine.handle(.shutdown) == [.finish, .end])
        #expect(machine.handle(.powered(false)) == [])
        var lost = Self.running()
        #expect(lost.handle(.busLost) == [.stopBeacon, .end])
        #expect(lost.handle(.ownerChanged(":1.7")) == [])
        var idle = AdapterMachine(adapterName: "hci0")
        #expect(idle.handle(.busLost) == [.end])
    }
}
