// SPDX-License-Identifier: GPL-3.0-or-later

/// When the beacon may run beside bluetoothd, as a pure state machine in the swift-nio style: it
/// takes what happened on the bus (bluetoothd's owner, the adapter's presence and Powered, the
/// advertisement released, the owner's switch, shutdown) and answers what to do, in order. The
/// service that drives it does the I/O and feeds back what it read; nothing here waits or calls.
package struct AdapterMachine: Sendable {
    package enum Event: Sendable, Equatable {
        /// `org.bluez` changed hands (`nil`: bluetoothd left the bus).
        case ownerChanged(String?)
        /// The answer to `.readAdapter`: the adapter's presence and Powered in bluetoothd's objects.
        case adapterRead(present: Bool, powered: Bool)
        /// The answer to `.readAdapter` when the objects could not be read: the signals will tell.
        case adapterUnreadable
        case adapterPresent(Bool)
        case powered(Bool)
        /// bluetoothd called Release on our advertisement.
        case released
        /// Exposure Notification switched on or off by its owner.
        case enabled(Bool)
        case shutdown
        /// The system bus connection ended.
        case busLost
    }

    package enum Action: Sendable, Equatable {
        /// Cancel the running beacon, wait for it, and write its open scan window.
        case stopBeacon
        /// After `.stopBeacon` when disabled: advertising and discovery off at bluetoothd.
        case silence
        /// Forget the advertisement's registration and discovery session (a new or released
        /// bluetoothd holds neither).
        case forgetRegistrations
        /// Read the adapter from bluetoothd's objects and answer with `.adapterRead`.
        case readAdapter
        /// Start the beacon.
        case startBeacon
        /// Report the radio's status: starting, or off for the reason given.
        case reportStarting
        case reportOff(reason: String)
        /// Shutdown: stop the beacon, write its window, unregister, sync the log.
        case finish
        /// The connection's loop ends here.
        case end
    }

    package let adapterName: String
    package private(set) var owner: String?
    package private(set) var adapterPresent = false
    package private(set) var powered = false
    package private(set) var enabled = false
    /// Whether the beacon runs (started and not yet stopped).
    package private(set) var running = false
    /// Waiting for `.adapterRead`: the adapter's state is not known, so nothing is decided.
    private var reading = false
    private var ended = false

    package init(adapterName: String) {
        self.adapterName = adapterName
    }

    package mutating func handle(_ event: Event) -> [Action] {
        guard !ended else { return [] }
        var actions: [Action] = []
        switch event {
        case .ownerChanged(let newOwner):
            // The same bluetoothd again while the beacon runs changes nothing.
            if newOwner == owner && running { return reconcile() }
            if running { actions += stop() }
            owner = newOwner
            adapterPresent = false
            powered = false
            actions.append(.forgetRegistrations)
            if newOwner != nil {
                reading = true
                actions.append(.readAdapter)
                return actions
            }
        case .adapterRead(let present, let powered):
            reading = false
            apply(present: present, powered: powered)
        case .adapterUnreadable:
            reading = false
        case .adapterPresent(let present):
            apply(present: present, powered: present ? powered : false)
        case .powered(let value):
            powered = value
        case .released:
            actions.append(.forgetRegistrations)
            // Registered again by the reconcile below.
            if running { actions += stop() }
        case .enabled(let value):
            enabled = value
        case .shutdown:
            ended = true
            running = false
            return [.finish, .end]
        case .busLost:
            ended = true
            return (running ? stop() : []) + [.end]
        }
        return actions + reconcile()
    }

    /// Why the beacon cannot run now, if it cannot.
    package var obstacle: String? {
        if owner == nil { return "bluetoothd is not on the system bus" }
        if !adapterPresent { return "adapter \(adapterName) not found" }
        if !powered { return "adapter \(adapterName) is powered off" }
        return nil
    }

    private mutating func apply(present: Bool, powered: Bool) {
        adapterPresent = present
        self.powered = present && powered
    }

    private mutating func stop() -> [Action] {
        running = false
        return [.stopBeacon]
    }

    /// The beacon started or stopped to match the state, and the status to say so.
    private mutating func reconcile() -> [Action] {
        guard !reading else { return [] }
        var actions: [Action] = []
        if !enabled {
            // Disabled: advertising and scanning stop; the status stays what the adapter is.
            if running { actions += stop() + [.silence] }
            if let obstacle { actions.append(.reportOff(reason: obstacle)) }
        } else if let obstacle {
            if running { actions += stop() }
            actions.append(.reportOff(reason: obstacle))
        } else if !running {
            running = true
            actions += [.reportStarting, .startBeacon]
        }
        return actions
    }
}
