// SPDX-License-Identifier: GPL-3.0-or-later

/// When the beacon may run and what the radio's status says, for both back ends, as a pure state
/// machine in the swift-nio style: events in (the owner's switch, shutdown, the back end's news,
/// the beacon's own faults, a wait's end), actions out, in order. The driver that feeds it does
/// the I/O and answers some actions with events (`.connect` with `.connected` or `.unreachable`,
/// `.readAdapter` with `.adapterRead`, `.wait` with `.waited`); nothing here waits or calls. The
/// fault rules (reconnection 1, 2, 4 … 30 s; re-initialisation after a fault, doubling while
/// faults come less than a minute apart) and every status reason are decided here and only here.
package struct BeaconMachine: Sendable {
    package enum Backend: Sendable, Equatable {
        /// A controller over HCI: connect, initialise, run; reconnect when it goes away.
        case hci
        /// bluetoothd's adapter `hciN`: run while bluetoothd is there and the adapter is powered.
        case bluez(adapter: String)
    }

    package enum Event: Sendable, Equatable {
        /// Exposure Notification switched on or off by its owner.
        case enabled(Bool)
        case shutdown
        /// The running beacon began advertising.
        case advertising
        /// The running beacon failed: a hardware error, a command refused, bluetoothd refusing.
        /// `at` is the time on the driver's monotonic clock, for the fault backoff.
        case fault(String, at: Duration)
        /// A `.wait` ended.
        case waited
        /// The wall clock was set, or its trust was gained or lost: a running beacon starts over,
        /// so that it broadcasts the interval of the clock as it now is (or nothing, untrusted).
        case clockShifted

        // HCI
        /// The answer to `.connect`: the transport is open.
        case connected
        /// The answer to `.connect`: it could not be opened.
        case unreachable
        /// The transport ended.
        case lost

        // BlueZ
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
        /// The system bus connection ended.
        case busLost
    }

    /// What a `.wait` is for.
    package enum Wait: Sendable, Equatable {
        /// Connecting again (HCI).
        case reconnect
        /// Starting the beacon again after a fault, which is said.
        case restart(after: String)
    }

    package enum Action: Sendable, Equatable {
        /// HCI: open the transport; answer `.connected` or `.unreachable`.
        case connect
        /// HCI: close the transport (its end is then no `.lost`).
        case disconnect
        /// BlueZ: read the adapter from bluetoothd's objects; answer `.adapterRead`.
        case readAdapter
        /// BlueZ: forget the advertisement's registration and discovery session (a new or released
        /// bluetoothd holds neither).
        case forgetRegistrations
        /// Start the beacon (HCI: initialise the controller first).
        case startBeacon
        /// Stop the running beacon, wait for it, and write its open scan window.
        case stopBeacon
        /// BlueZ, disabled: advertising and discovery off at bluetoothd.
        case silence
        /// Stop the beacon and end its session: the window written, advertising off, the log synced.
        case finish
        /// Wait, then answer `.waited`.
        case wait(Duration, for: Wait)
        /// The radio's status, and why when it is not running.
        case reportStarting
        case reportActive
        case reportOff(reason: String)
        /// The driver's loop ends here.
        case end
    }

    /// Why the beacon over bluetoothd is off when the system bus is not there: gone, or not
    /// reachable at all (the service's connection to it, before any machine runs).
    package static let busGone = "the system bus went away"
    package static let busUnreachable = "the system bus is unreachable"

    package let backend: Backend
    package private(set) var enabled = false
    /// Whether the beacon runs (started and not yet stopped).
    package private(set) var running = false
    /// The wait under way, if any: nothing starts or connects until it ends.
    package private(set) var waiting: Wait?
    private var ended = false
    private var connectBackoff = Backoff()
    private var faultBackoff = Backoff()
    private var lastFault: Duration?
    // HCI
    package private(set) var connected = false
    private var connecting = false
    // BlueZ
    package private(set) var owner: String?
    package private(set) var adapterPresent = false
    package private(set) var powered = false
    /// Waiting for `.adapterRead`: the adapter's state is not known, so nothing is decided.
    private var reading = false

    package init(backend: Backend) {
        self.backend = backend
    }

    package mutating func handle(_ event: Event) -> [Action] {
        guard !ended else { return [] }
        switch event {
        case .shutdown:
            ended = true
            running = false
            if case .hci = backend { return connected ? [.finish, .disconnect, .end] : [.end] }
            return [.finish, .end]
        case .busLost:
            ended = true
            return stop() + [.reportOff(reason: Self.busGone), .end]
        case .advertising:
            return running ? [.reportActive] : []
        case .fault(let reason, let at):
            guard running else { return [] }
            // Faults a quiet minute apart start the backoff again at 1 s.
            if let lastFault, at - lastFault >= .seconds(60) { faultBackoff.reset() }
            lastFault = at
            waiting = .restart(after: reason)
            return stop() + [.reportStarting, .wait(faultBackoff.next(), for: .restart(after: reason))]
        case .clockShifted:
            guard running else { return [] }
            return stop() + reconcile()
        case .waited:
            let wait = waiting
            waiting = nil
            if case .reconnect = wait, case .hci = backend { return connectIfWanted() }
            return reconcile()
        default:
            break
        }
        if case .hci = backend { return handleHCI(event) }
        return handleBlueZ(event)
    }

    // MARK: HCI

    private mutating func handleHCI(_ event: Event) -> [Action] {
        switch event {
        case .enabled(let value):
            enabled = value
            if !value {
                // The controller is let go: the window written, advertising off, the transport closed.
                guard connected else { return [] }
                running = false
                connected = false
                return [.finish, .disconnect]
            }
            return connected ? reconcile() : connectIfWanted()
        case .connected:
            connecting = false
            connected = true
            connectBackoff.reset()
            return reconcile()
        case .unreachable:
            connecting = false
            waiting = .reconnect
            return [.reportOff(reason: "the controller is unreachable"), .wait(connectBackoff.next(), for: .reconnect)]
        case .lost:
            guard connected else { return [] }
            connected = false
            let stopped = stop()
            connectBackoff.reset()
            waiting = .reconnect
            return stopped + [.disconnect, .reportStarting, .wait(connectBackoff.next(), for: .reconnect)]
        default:
            return []
        }
    }

    private mutating func connectIfWanted() -> [Action] {
        guard enabled, !connected, !connecting, waiting == nil else { return [] }
        connecting = true
        return [.connect]
    }

    // MARK: BlueZ

    private mutating func handleBlueZ(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .ownerChanged(let newOwner):
            // The same bluetoothd again while the beacon runs changes nothing.
            if newOwner == owner && running { return reconcile() }
            actions += stop()
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
            actions += stop()
        case .enabled(let value):
            enabled = value
        default:
            return []
        }
        return actions + reconcile()
    }

    private mutating func apply(present: Bool, powered: Bool) {
        adapterPresent = present
        self.powered = present && powered
    }

    /// Why the beacon cannot run on its back end now, if it cannot.
    package var obstacle: String? {
        switch backend {
        case .hci:
            return connected ? nil : "the controller is not connected"
        case .bluez(let adapter):
            if owner == nil { return "bluetoothd is not on the system bus" }
            if !adapterPresent { return "adapter \(adapter) not found" }
            if !powered { return "adapter \(adapter) is powered off" }
            return nil
        }
    }

    // MARK: Both

    private mutating func stop() -> [Action] {
        guard running else { return [] }
        running = false
        return [.stopBeacon]
    }

    /// The beacon started or stopped to match the state, and the status to say so.
    private mutating func reconcile() -> [Action] {
        guard !reading else { return [] }
        if case .hci = backend {
            guard enabled, connected, !running, waiting == nil else { return [] }
            running = true
            return [.reportStarting, .startBeacon]
        }
        var actions: [Action] = []
        if !enabled {
            // Disabled: advertising and scanning stop; the status stays what the adapter is.
            if running { actions += stop() + [.silence] }
            if let obstacle { actions.append(.reportOff(reason: obstacle)) }
        } else if let obstacle {
            actions += stop()
            actions.append(.reportOff(reason: obstacle))
        } else if !running, waiting == nil {
            running = true
            actions += [.reportStarting, .startBeacon]
        }
        return actions
    }
}
