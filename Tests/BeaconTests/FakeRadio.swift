// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Beacon
import Synchronization

/// A radio back end that does what it is told and remembers it: what was advertised from which
/// address, and the scan calls. Nothing is on the air; the daemon's logic around it is real.
final class FakeRadio: BeaconRadio {
    struct State {
        var advertised: [(payload: ExposureNotificationPayload, address: BluetoothAddress)] = []
        var scanning = false
        var windows = 0
        var stops = 0
    }

    private let state = Mutex(State())

    var advertised: [(payload: ExposureNotificationPayload, address: BluetoothAddress)] { state.withLock { $0.advertised } }
    var scanning: Bool { state.withLock { $0.scanning } }
    var windows: Int { state.withLock { $0.windows } }
    var stops: Int { state.withLock { $0.stops } }

    var advertisingTxPower: Int8 { -8 }

    func advertise(_ payload: ExposureNotificationPayload, from address: BluetoothAddress, interval: ClosedRange<UInt16>) async throws
        -> BluetoothAddress?
    {
        state.withLock { $0.advertised.append((payload, address)) }
        return address
    }

    func stopAdvertising() async throws { state.withLock { $0.stops += 1 } }

    func startScanning() async throws {
        state.withLock {
            $0.scanning = true
            $0.windows += 1
        }
    }

    func stopScanning() async throws { state.withLock { $0.scanning = false } }
}
