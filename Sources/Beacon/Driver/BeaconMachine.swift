// SPDX-License-Identifier: GPL-3.0-or-later

/// When the beacon may run and what the radio's status says, for every back end, as a pure state
/// machine in the swift-nio style: events in (the owner's switch, shutdown, the back end's news,
/// the beacon's own faults, a wait's end), actions out, in order. `BeaconDriver` feeds it, does the
/// I/O and answers some actions with events (`.connect` with `.connected` or `.unreachable`,
/// `.readAdapter` with `.adapterRead`, `.wait` with `.waited`); nothing here waits or calls. The
/// fault rules (reconnection 1, 2, 4 … 30 s; a restart after a fault, doubling while faults come
/// less than a minute apart) and every status reason are decided here and only here.
///
/// Its state is typed, as bluetoothd's adapter states are (`src/adapter.c`): the link to the radio
/// (`Link`), what the host says of the adapter on it (`Adapter`, BlueZ), and the beacon (`Run`).
package struct BeaconMachine: Sendable {
    package enum Backend: Sendable, Equatable {
        /// A controller over HCI: connect while enabled, initialise, run; reconnect when it goes away.
        case hci
        /// bluetoothd's adapter `hciN` over the system bus: always connected (the status follows
        /// the adapter while disabled); run while bluetoothd is there and the adapter is powered.
        case bluez(adapter: String)
    }

    package enum Event: Sendable, Equatable {
        /// Exposure Notification switched on or off by its owner.
        case enabled(Bool)
        case shutdown
        /// The answer to `.connect`: the link is open (HCI: the transport; BlueZ: the system bus).
        case connected
        /// The answer to `.connect`: it could not be opened.
        case unreachable
        /// The link ended by itself.
        case lost
        /// The running beacon began advertising.
        case advertising
        /// The running beacon failed: a hardware error, a command refused, bluetoothd refusing.
        /// `at` is the time on the driver's monotonic clock, for the fault backoff.
        case fault(String, at: Duration)
        /// A `.wait` for this ended.
        case waited(Wait)
        /// The wall clock was set, or its trust was gained or lost: a running beacon starts over,
        /// so that it broadcasts the interval of the clock as it now is (or nothing, untrusted).
        case clockShifted

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
    }

    /// What a `.wait` is for.
    package enum Wait: Sendable, Equatable {
        /// Opening the link again.
        case reconnect
        /// Starting the beacon again after a fault, which is said.
        case restart(after: String)
    }

    package enum Action: Sendable, Equatable {
        /// Open the link; answer `.connected` or `.unreachable`.
        case connect
        /// Close the link (its end is then no `.lost`).
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

    /// The link to the radio.
    package enum Link: Sendable, Equatable {
        case closed
        /// `.connect` asked, not yet answered.
        case opening
        /// Waiting to open it again: nothing connects until the wait ends.
        case reopening
        case open
        /// Shut down: nothing more is decided.
        case ended
    }

    /// What bluetoothd says of the adapter, on an open bus.
    package enum Adapter: Sendable, Equatable {
        /// bluetoothd is not on the bus.
        case noHost
        /// Its objects are being read: nothing is decided until they are.
        case reading
        case known(present: Bool, powered: Bool)
    }

    /// The beacon.
    package enum Run: Sendable, Equatable {
        case stopped
        case running
        /// Stopped by a fault: nothing starts until the wait ends.
        case restarting(after: String)
    }

    /// Why the beacon over bluetoothd is off when the system bus is not there: gone, or not
    /// reachable at all.
    package static let busGone = "the system bus went away"
    package static let busUnreachable = "the system bus is unreachable"
    package static let controllerUnreachable = "the controller is unreachable"

    package let backend: Backend
    package private(set) var enabled = false
    package private(set) var link = Link.closed
    /// bluetoothd's name on the bus, and its adapter (BlueZ, on an open link).
    package private(set) var owner: String?
    package private(set) var adapter = Adapter.noHost
    package private(set) var run = Run.stopped
    private var connectBackoff = Backoff()
    private var faultBackoff = Backoff()
    private var lastFault: Duration?

    package init(backend: Backend) {
        self.backend = backend
    }

    package var running: Bool { run == .running }
    package var connected: Bool { link == .open }

    package mutating func handle(_ event: Event) -> [Action] {
        guard link != .ended else { return [] }
        switch event {
        case .shutdown:
            let wasOpen = link == .open
            link = .ended
            run = .stopped
            return wasOpen ? [.finish, .disconnect, .end] : [.end]
        case .enabled(let value):
            enabled = value
            if !value, case .hci = backend {
                // The controller is let go: the window written, advertising off, the transport closed.
                guard link == .open else { return [] }
                run = .stopped
                link = .closed
                return [.finish, .disconnect]
            }
            return link == .open ? reconcile() : connectIfWanted()
        case .connected:
            guard link == .opening else { return [] }
            link = .open
            connectBackoff.reset()
            return reconcile()
        case .unreachable:
            guard link == .opening else { return [] }
            link = .reopening
            return [.reportOff(reason: unreachable), .wait(connectBackoff.next(), for: .reconnect)]
        case .lost:
            guard link == .open else { return [] }
            let stopped = stop()
            link = .reopening
            forgetHost()
            connectBackoff.reset()
            let status: Action = if case .hci = backend { .reportStarting } else { .reportOff(reason: Self.busGone) }
            return stopped + [.disconnect, status, .wait(connectBackoff.next(), for: .reconnect)]
        case .waited(.reconnect):
            guard link == .reopening else { return [] }
            link = .closed
            return connectIfWanted()
        case .waited(.restart(let reason)):
            guard run == .restarting(after: reason) else { return [] }
            run = .stopped
            return reconcile()
        case .advertising:
            return running ? [.reportActive] : []
        case .fault(let reason, let at):
            guard running else { return [] }
            // Faults a quiet minute apart start the backoff again at 1 s.
            if let lastFault, at - lastFault >= .seconds(60) { faultBackoff.reset() }
            lastFault = at
            run = .restarting(after: reason)
            return [.stopBeacon, .reportStarting, .wait(faultBackoff.next(), for: .restart(after: reason))]
        case .clockShifted:
            guard running else { return [] }
            return stop() + reconcile()
        case .ownerChanged, .adapterRead, .adapterUnreadable, .adapterPresent, .powered, .released:
            guard case .bluez = backend, link == .open else { return [] }
            return handleBluetoothd(event)
        }
    }

    private var unreachable: String {
        if case .hci = backend { return Self.controllerUnreachable }
        return Self.busUnreachable
    }

    /// HCI connects only while enabled (another program may have the controller meanwhile);
    /// BlueZ always, so the status follows the adapter.
    private mutating func connectIfWanted() -> [Action] {
        guard link == .closed else { return [] }
        if case .hci = backend, !enabled { return [] }
        link = .opening
        return [.connect]
    }

    private mutating func forgetHost() {
        owner = nil
        adapter = .noHost
    }

    // MARK: bluetoothd

    private mutating func handleBluetoothd(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .ownerChanged(let newOwner):
            // The same bluetoothd again while the beacon runs changes nothing.
            if newOwner == owner && running { return reconcile() }
            actions += stop()
            forgetHost()
            owner = newOwner
            actions.append(.forgetRegistrations)
            if newOwner != nil {
                adapter = .reading
                actions.append(.readAdapter)
                return actions
            }
        case .adapterRead(let present, let powered):
            guard adapter == .reading else { return [] }
            adapter = .known(present: present, powered: present && powered)
        case .adapterUnreadable:
            guard adapter == .reading else { return [] }
            adapter = .known(present: false, powered: false)
        case .adapterPresent(let present):
            guard case .known(_, let powered) = adapter else { return [] }
            adapter = .known(present: present, powered: present && powered)
        case .powered(let value):
            guard case .known(let present, _) = adapter else { return [] }
            adapter = .known(present: present, powered: present && value)
        case .released:
            actions.append(.forgetRegistrations)
            // Registered again by the reconcile below.
            actions += stop()
        default:
            return []
        }
        return actions + reconcile()
    }

    /// Why the beacon cannot run on its back end now, if it cannot.
    package var obstacle: String? {
        switch backend {
        case .hci:
            return link == .open ? nil : "the controller is not connected"
        case .bluez(let name):
            if link != .open { return Self.busGone }
            switch adapter {
            case .noHost: return "bluetoothd is not on the system bus"
            case .reading: return "bluetoothd's objects are being read"
            case .known(false, _): return "adapter \(name) not found"
            case .known(true, false): return "adapter \(name) is powered off"
            case .known(true, true): return nil
            }
        }
    }

    // MARK: Both

    private mutating func stop() -> [Action] {
        guard running else { return [] }
        run = .stopped
        return [.stopBeacon]
    }

    /// The beacon started or stopped to match the state, and the status to say so.
    private mutating func reconcile() -> [Action] {
        guard link == .open, adapter != .reading else { return [] }
        if case .hci = backend {
            guard enabled, run == .stopped else { return [] }
            run = .running
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
        } else if run == .stopped {
            run = .running
            actions += [.reportStarting, .startBeacon]
        }
        return actions
    }
}
