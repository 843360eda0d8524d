// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
import Synchronization

/// A connection to a message bus. libdbus runs on the connection's own pump thread; this handle
/// queues messages to it, awaits replies while the pump keeps dispatching (so a peer may call back
/// into this connection before it answers), serves the exported objects and delivers signals.
/// Closed by `close()` or when the last reference goes.
package final class DBusConnection: Sendable {
    private let pump: Pump
    let state: ConditionLock<ConnectionState>
    /// This connection's unique name on the bus (`:1.42`).
    package let uniqueName: String
    /// Calls to exported objects, for `serve`; bounded (a flood of calls is refused, not queued).
    private let calls: AsyncStream<(DBusMessage, ObjectTable.Route)>
    private let callSink: AsyncStream<(DBusMessage, ObjectTable.Route)>.Continuation
    static let queuedCalls = 1024

    struct ConnectionState {
        var objects = ObjectTable()
        var subscriptions: [UInt64: Subscription] = [:]
        var nextID: UInt64 = 1
        /// Well-known names a match rule names → their current unique owner.
        var owners: [String: String] = [:]
        var ownerWatchCount: [String: Int] = [:]
        var connected = true
        /// Signals received so far (each gets the next number as its `sequence`).
        var signalsReceived: UInt64 = 0
    }

    struct Subscription {
        var rule: DBusMatchRule
        var continuation: AsyncStream<DBusMessage>.Continuation
        /// The sequence of the last signal handed to this subscription.
        var lastDelivered: UInt64 = 0
    }

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the standard socket).
    package static func system(limits: DBusLimits = .standard) async throws(DBusError) -> DBusConnection {
        try await DBusConnection(.system, limits: limits)
    }
    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
    package static func session(limits: DBusLimits = .standard) async throws(DBusError) -> DBusConnection {
        try await DBusConnection(.session, limits: limits)
    }
    /// The bus at `address` (`unix:path=/run/...`).
    package static func bus(address: String, limits: DBusLimits = .standard) async throws(DBusError) -> DBusConnection {
        try await DBusConnection(.address(address), limits: limits)
    }

    private init(_ address: Pump.Address, limits: DBusLimits) async throws(DBusError) {
        // The pump reports to this object, which does not exist yet: a box it is put into.
        let box = WeakBox()
        pump = try await Pump.start(
            address, limits: limits,
            events: Pump.Events(
                disposition: { header in box.connection?.disposition(header) ?? .drop },
                message: { message in box.connection?.received(message) },
                disconnected: { box.connection?.lost() }))
        uniqueName = pump.uniqueName
        state = ConditionLock(ConnectionState())
        (calls, callSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(Self.queuedCalls))
        box.set(self)
    }

    deinit { pump.submit(.close) }

    /// Closes the connection: pending calls fail with Disconnected, signal streams finish.
    package func close() { pump.submit(.close) }

    package var isConnected: Bool { state.withLock { $0.connected } }

    /// Answers the calls to this connection's exported objects, each in a child task of the
    /// caller's, until the connection ends: an owner that exports objects runs this in its task
    /// group (once), so no handler runs in a task nobody owns. A call to nothing exported is
    /// refused at once, on the pump, served or not.
    package func serve() async {
        await withDiscardingTaskGroup { group in
            for await (call, route) in calls {
                group.addTask { await self.answer(call, route: route) }
            }
        }
    }

    /// Returns when the connection is gone (closed here, by the bus, or by the bus going away),
    /// or when the task is cancelled.
    package func disconnected() async {
        await state.wait { !$0.connected }
    }

    // MARK: Sending

    /// Sends a message that wants no reply (a signal, a reply, a call with `noReply`).
    package func send(_ message: DBusMessage) throws(DBusError) {
        let pointer = try Marshalling.encode(message)
        pump.submit(.send(Pump.MessagePointer(pointer: pointer), reply: nil, id: 0, timeoutMilliseconds: 0))
    }

    /// Calls a method and returns the reply; a D-Bus error reply is thrown as `DBusError`. Incoming
    /// calls keep being served while it waits. Cancelling the task abandons the call.
    package func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws -> DBusMessage {
        var message = message
        message.kind = .methodCall
        message.noReply = false
        let pointer = try Marshalling.encode(message)
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let result: Result<DBusMessage, DBusError> = await withTaskCancellationHandler {
            await HandOff.await { reply in
                pump.submit(.send(Pump.MessagePointer(pointer: pointer), reply: reply, id: id, timeoutMilliseconds: milliseconds))
            }
        } onCancel: {
            pump.submit(.cancel(id: id))
        }
        if case .failure = result, Task.isCancelled { throw CancellationError() }
        return try result.get()
    }

    /// Calls a method and returns the reply's body.
    package func call(
        destination: String?, path: String, interface: String?, member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws -> [DBusValue] {
        try await call(.call(destination: destination, path: path, interface: interface, member: member, arguments), timeout: timeout).body
    }

    /// Emits a signal from `path`.
    package func emit(path: String, interface: String, member: String, _ arguments: [DBusValue] = []) throws(DBusError) {
        try send(.signal(path: path, interface: interface, member: member, arguments))
    }

    /// Emits org.freedesktop.DBus.Properties.PropertiesChanged.
    package func emitPropertiesChanged(path: String, interface: String, changed: [String: DBusValue], invalidated: [String] = []) throws(DBusError) {
        try emit(
            path: path, interface: StandardInterfaces.properties, member: "PropertiesChanged",
            [.string(interface), .properties(changed), .strings(invalidated)])
    }

    // MARK: Incoming (on the pump thread)

    /// What is routed, from the header alone: calls to what is exported (anything else is refused
    /// with UnknownObject, UnknownInterface, UnknownMethod or InvalidArgs), signals a subscription
    /// or an owner watch matches (a rule's sender narrows it to that peer); replies nobody waits
    /// for are dropped. The body of what is not routed is never decoded.
    private func disposition(_ header: Pump.Header) -> Pump.Disposition {
        switch header.kind {
        case .methodCall:
            let refusal = state.withLock {
                $0.objects.refusal(.init(path: header.path, interface: header.interface, member: header.member, signature: header.signature))
            }
            return refusal.map { .refuse($0) } ?? .decode
        case .signal:
            let wanted = state.withLock { state in
                if header.sender == StandardInterfaces.bus, header.interface == StandardInterfaces.bus, header.member == "NameOwnerChanged",
                    header.signature == "sss", let name = header.arg0(), state.ownerWatchCount[name] != nil
                {
                    return true
                }
                return state.subscriptions.values.contains { subscription in
                    subscription.rule.matches(
                        kind: .signal, sender: header.sender, interface: header.interface, member: header.member, path: header.path,
                        arg0: header.arg0, owner: { state.owners[$0] })
                }
            }
            return wanted ? .decode : .drop
        case .methodReturn, .error:
            // A reply to a call abandoned or timed out: nobody waits for it.
            return .drop
        }
    }

    private func received(_ message: DBusMessage) {
        switch message.kind {
        case .methodCall:
            let route = state.withLock { $0.objects.route(message) }
            if case .failure(let error) = route {
                if !message.noReply { try? send(message.errorReply(error)) }
                return
            }
            // Handlers are async and may call back into the bus: off the pump thread, in `serve`.
            if case .enqueued = callSink.yield((message, route)) { return }
            if !message.noReply { try? send(message.errorReply(DBusError(.limitsExceeded, "too many calls waiting for an answer"))) }
        case .signal:
            if message.sender == StandardInterfaces.bus, message.interface == StandardInterfaces.bus, message.member == "NameOwnerChanged",
                message.body.count == 3, let name = message.body[0].string, let newOwner = message.body[2].string
            {
                state.withLock { state in
                    if state.ownerWatchCount[name] != nil { state.owners[name] = newOwner.isEmpty ? nil : newOwner }
                }
            }
            // Handed over outside the lock. A yield resumes the stream's waiting task, which takes
            // that task's status lock; a task being cancelled holds its status lock while the
            // stream's onTermination runs, and that takes ours: yielding under ours deadlocked
            // gaenctl detect (the pump in yield, the command in cancel). Only this thread yields,
            // so the order holds; `lastDelivered` is set after the yield, never ahead of the stream.
            let (numbered, receivers) = state.withLock { state in
                state.signalsReceived += 1
                var numbered = message
                numbered.sequence = state.signalsReceived
                let receivers = state.subscriptions.filter { entry in entry.value.rule.matches(message, owner: { name in state.owners[name] }) }
                return (numbered, receivers.map { (id: $0.key, continuation: $0.value.continuation) })
            }
            for receiver in receivers { receiver.continuation.yield(numbered) }
            state.withLock { state in
                for receiver in receivers { state.subscriptions[receiver.id]?.lastDelivered = numbered.sequence }
            }
        case .methodReturn, .error:
            // A reply to a call abandoned or timed out: nobody waits for it.
            break
        }
    }

    private func lost() {
        // Waiters in `disconnected()` are woken by the change.
        let subscriptions = state.withLock { state in
            state.connected = false
            defer { state.subscriptions.removeAll() }
            return Array(state.subscriptions.values)
        }
        for subscription in subscriptions { subscription.continuation.finish() }
        callSink.finish()
    }
}

/// Lets the pump's callbacks reach the connection without keeping it alive.
private final class WeakBox: Sendable {
    private let reference = Mutex<WeakReference>(WeakReference())
    private struct WeakReference { weak var connection: DBusConnection? }
    func set(_ connection: DBusConnection) { reference.withLock { $0.connection = connection } }
    var connection: DBusConnection? { reference.withLock { $0.connection } }
}
