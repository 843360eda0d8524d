// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
import Synchronization

extension DBusConnection {
    /// The signals matching `rule`, from the moment this returns (the bus has the rule by then)
    /// until the stream is dropped or the connection closes.
    package func signals(matching rule: DBusMatchRule) async throws -> AsyncStream<DBusMessage> {
        try await subscribe(rule).messages
    }

    /// A subscription: its signals, and what `lastDelivered(to:)` asks about.
    package struct SignalSubscription: Sendable {
        package let messages: AsyncStream<DBusMessage>
        let id: UInt64
    }

    /// The sequence of the last signal handed to `subscription`'s stream. A signal that arrived
    /// before a reply was handed over before the reply's call returned, so a consumer that has
    /// processed up to this number after a call has seen every signal sent before its reply.
    package func lastDelivered(to subscription: SignalSubscription) -> UInt64 {
        state.withLock { $0.subscriptions[subscription.id]?.lastDelivered ?? 0 }
    }

    /// `signals(matching:)`, with the subscription's identity.
    package func subscribe(_ rule: DBusMatchRule) async throws -> SignalSubscription {
        try rule.validate()
        let wellKnownSender = rule.sender.flatMap { $0.hasPrefix(":") || $0 == StandardInterfaces.bus ? nil : $0 }
        if let wellKnownSender { try await trackOwner(of: wellKnownSender) }
        _ = try await call(
            destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "AddMatch", [.string(rule.text)])
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.subscriptions[state.nextID] = Subscription(rule: rule, continuation: continuation)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            // (Runs after `subscribe` returned: the id is the subscription's.)
            let connected = self.state.withLock { state in
                state.subscriptions[id] = nil
                return state.connected
            }
            guard connected else { return }
            try? self.send(
                .call(
                    destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "RemoveMatch",
                    [.string(rule.text)]
                ).noReplyWanted())
            if let wellKnownSender { self.untrackOwner(of: wellKnownSender) }
        }
        return SignalSubscription(messages: stream, id: id)
    }

    /// The owner of `name` now (nil without one), then each change, until the stream is dropped.
    package func nameOwner(of name: String) async throws -> AsyncStream<String?> {
        guard DBusNames.isValidBusName(name), !name.hasPrefix(":") else { throw DBusError(.invalidArgs, "'\(name)' is not a well-known bus name") }
        let changes = try await signals(
            matching: DBusMatchRule(
                sender: StandardInterfaces.bus, interface: StandardInterfaces.bus, member: "NameOwnerChanged", path: StandardInterfaces.busPath, arg0: name))
        let current = try await owner(of: name)
        // Read by whoever iterates it: no task of its own.
        let owners = OwnerChanges(first: current, changes: changes)
        return AsyncStream(unfolding: { await owners.next() })
    }

    /// The unique name owning `name`, or nil.
    package func owner(of name: String) async throws -> String? {
        do {
            return try await call(
                destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "GetNameOwner",
                [.string(name)]
            ).first?.string
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            return nil
        }
    }

    /// What RequestName answered.
    package enum NameRequestReply: UInt32, Sendable {
        case primaryOwner = 1, inQueue, exists, alreadyOwner
    }

    /// Asks the bus for a well-known name, without queueing (DBUS_NAME_FLAG_DO_NOT_QUEUE).
    package func requestName(_ name: String) async throws -> NameRequestReply {
        let reply = try await call(
            destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "RequestName",
            [.string(name), .uint32(4)])
        guard let code = reply.first?.uint32, let answer = NameRequestReply(rawValue: code) else {
            throw DBusError(.failed, "RequestName answered \(reply)")
        }
        return answer
    }

    private func trackOwner(of name: String) async throws {
        let first = state.withLock { state in
            state.ownerWatchCount[name, default: 0] += 1
            return state.ownerWatchCount[name] == 1
        }
        guard first else { return }
        let rule = DBusMatchRule(sender: StandardInterfaces.bus, interface: StandardInterfaces.bus, member: "NameOwnerChanged", arg0: name)
        _ = try await call(
            destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "AddMatch", [.string(rule.text)])
        // After AddMatch: a change from now on updates the cache, so the answer below cannot be stale
        // for long.
        let owner = try await owner(of: name)
        state.withLock { $0.owners[name] = $0.owners[name] ?? owner }
    }

    private func untrackOwner(of name: String) {
        state.withLock { state in
            state.ownerWatchCount[name, default: 1] -= 1
            if state.ownerWatchCount[name] == 0 {
                state.ownerWatchCount[name] = nil
                state.owners[name] = nil
            }
        }
    }
}

extension DBusMessage {
    func noReplyWanted() -> DBusMessage {
        var copy = self
        copy.noReply = true
        return copy
    }
}

/// The owner now, then each NameOwnerChanged's new owner: `nameOwner`'s stream, read by its
/// iterator's task.
private final class OwnerChanges: @unchecked Sendable {
    // @unchecked: one iterator, so one task calls `next` at a time.
    private var first: String??
    private var changes: AsyncStream<DBusMessage>.Iterator

    init(first: String?, changes: AsyncStream<DBusMessage>) {
        self.first = .some(first)
        self.changes = changes.makeAsyncIterator()
    }

    /// The next owner (nil inside: no owner), or nil when the signals end.
    func next() async -> String?? {
        if let first {
            self.first = nil
            return .some(first)
        }
        while let change = await changes.next() {
            if change.body.count == 3, let newOwner = change.body[2].string { return .some(newOwner.isEmpty ? nil : newOwner) }
        }
        return nil
    }
}
