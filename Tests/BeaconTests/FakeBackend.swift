// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import Synchronization

/// A back end of the BlueZ kind with nothing behind it: each link's radio is the one `FakeRadio`,
/// its news is what the test tells it, and the back end's own actions are recorded. The driver
/// around it is the real one.
final class FakeBackend: BeaconBackend {
    let radio = FakeRadio()
    private let opened = Mutex<[FakeLink]>([])

    var kind: BeaconMachine.Backend { .bluez(adapter: "hci0") }
    var linkName: String { "fake bus" }

    var links: [FakeLink] { opened.withLock { $0 } }

    func connect(reports: ReportRoute) async throws -> FakeLink {
        let link = FakeLink(radio: radio, reports: reports)
        opened.withLock { $0.append(link) }
        return link
    }
}

final class FakeLink: BeaconLink {
    let fake: FakeRadio
    let reports: ReportRoute
    private let news: AsyncStream<BeaconMachine.Event>
    private let sink: AsyncStream<BeaconMachine.Event>.Continuation
    private let done = Mutex<[BeaconMachine.Action]>([])

    init(radio: FakeRadio, reports: ReportRoute) {
        fake = radio
        self.reports = reports
        (news, sink) = AsyncStream.makeStream()
    }

    /// The back end's own actions the driver asked for, in order.
    var performed: [BeaconMachine.Action] { done.withLock { $0 } }

    /// News from the host (bluetoothd's owner, the adapter).
    func tell(_ event: BeaconMachine.Event) { sink.yield(event) }

    /// The link ends by itself (the bus went away).
    func lose() { sink.finish() }

    func run(events: BeaconEvents) async {
        for await event in news { events.tell(event) }
    }

    func radio() async throws -> any BeaconRadio { fake }

    func fault(for error: any Error) -> String? { "\(error)" }

    func perform(_ action: BeaconMachine.Action) async -> [BeaconMachine.Event] {
        done.withLock { $0.append(action) }
        return action == .readAdapter ? [.adapterRead(present: true, powered: true)] : []
    }

    func close() { sink.finish() }
}
