// SPDX-License-Identifier: GPL-3.0-or-later

/// A way to a radio, for `BeaconDriver`: HCI over a transport (`HCIBackend`), bluetoothd over the
/// system bus (`BlueZBackend`). The driver decides when (through `BeaconMachine`); a back end only
/// opens its link, and the link does the back end's part. A third back end is one type of each.
package protocol BeaconBackend: Sendable {
    associatedtype Link: BeaconLink
    /// Which of the machine's rules apply.
    var kind: BeaconMachine.Backend { get }
    /// What the link is called in the journal ("controller", "system bus").
    var linkName: String { get }
    /// Opens the link; its radio's reports go to `reports`. Throws when it cannot be reached.
    func connect(reports: ReportRoute) async throws -> Link
}

/// One open link to a radio: read by its own `run`, which hands the radio's reports to the route
/// it was opened with (keeping the drain that `BeaconRadio.stopScanning` promises) and tells the
/// driver the back end's news.
package protocol BeaconLink: Sendable {
    /// Reads the link until it ends (lost, or closed): the back end's events go to `events`.
    func run(events: BeaconEvents) async
    /// A radio to run a beacon on (HCI: the controller initialised first).
    func radio() async throws -> any BeaconRadio
    /// The machine's event for the error a beacon run ended with; nil when the error is the
    /// link's end (which its `run` tells) or the run was cancelled.
    func fault(for error: any Error) -> String?
    /// The back end's own actions (`.readAdapter`, `.forgetRegistrations`): their answers.
    func perform(_ action: BeaconMachine.Action) async -> [BeaconMachine.Event]
    /// Closes the link: its `run` then returns, and the driver hears no `.lost` of it.
    func close()
}

extension BeaconLink {
    package func perform(_ action: BeaconMachine.Action) async -> [BeaconMachine.Event] { [] }
}

/// How a link tells its driver the back end's news: tagged with the link, so that news of a link
/// already closed is dropped.
package struct BeaconEvents: Sendable {
    let sink: AsyncStream<BeaconInput>.Continuation
    let generation: Int
    let since: Stopwatch

    package func tell(_ event: BeaconMachine.Event) {
        sink.yield(.link(generation, event))
    }

    /// The radio failed (a hardware error): the beacon restarts after the fault backoff.
    package func fault(_ reason: String) {
        tell(.fault(reason, at: since.elapsed))
    }
}

/// What the driver's loop takes in: the machine's events, and those of one link or one run of the
/// beacon tagged with it (news of a link closed or a run stopped is stale).
enum BeaconInput: Sendable {
    case event(BeaconMachine.Event)
    case link(Int, BeaconMachine.Event)
    case run(Int, BeaconMachine.Event)
}
