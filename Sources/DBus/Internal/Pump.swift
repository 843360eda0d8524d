// SPDX-License-Identifier: GPL-3.0-or-later

internal import CDBus
internal import CGaendShims
import Glibc
import Synchronization
import SystemCalls

/// The one owner of a libdbus connection: a thread that runs the connection's main loop (libdbus's
/// watches and timeouts in `poll`, then dispatch), sends what other threads queue, completes
/// pending calls and hands every incoming message to the connection. Every libdbus call on the
/// connection happens on this thread (a `DescriptorThread`); other threads only queue commands and
/// poke it.
///
/// `@unchecked Sendable`: `inbox` is behind its Mutex; everything else is touched only on the
/// pump thread (or before it starts).
final class Pump: @unchecked Sendable {
    enum Address: Sendable {
        case system, session
        case address(String)
    }

    typealias ReplyHandler = @Sendable (Result<DBusMessage, DBusError>) -> Void

    /// An encoded message handed from the caller to the pump, which unrefs it.
    struct MessagePointer: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    enum Command: Sendable {
        case send(MessagePointer, reply: ReplyHandler?, id: UInt64, timeoutMilliseconds: Int32)
        case cancel(id: UInt64)
        case close
    }

    /// An incoming message's header, read without decoding its body.
    struct Header {
        var kind: DBusMessage.Kind
        var path: String?
        var interface: String?
        var member: String?
        var sender: String?
        /// The body's signature, from the header field.
        var signature: String
        /// The first argument if it is a string (of at most 4,096 bytes: match rules' arg0 are names).
        var arg0: () -> String?
    }

    /// What the connection wants done with an incoming message, decided from its header.
    enum Disposition: Sendable {
        /// Decode it and hand it to `message`.
        case decode
        /// Nobody wants it: freed undecoded.
        case drop
        /// A call nothing answers: this error goes back (unless it wants no reply), the body undecoded.
        case refuse(DBusError)
    }

    struct Events: Sendable {
        /// Whether a message that is not a reply to a pending call is wanted, on the pump thread.
        var disposition: @Sendable (Header) -> Disposition
        /// Every message `disposition` wanted decoded, in arrival order, on the pump thread.
        var message: @Sendable (DBusMessage) -> Void
        /// The connection is gone (closed by either side); called once, last.
        var disconnected: @Sendable () -> Void
    }

    /// Commands for the pump; `nil` once the pump has ended.
    private let inbox = Mutex<[Command]?>([])
    /// The pump's thread (a `DescriptorThread`), once it runs: commands are put in `inbox`, then
    /// it is poked.
    private let thread = Mutex<DescriptorThread?>(nil)
    private let address: Address
    /// Told once whether the connection opened; set before the thread starts.
    private var opened: (@Sendable (Result<Void, DBusError>) -> Void)?
    /// Whether the connection was opened (a pump that never opened has nothing to shut down).
    private var started = false
    /// The watches the current wait polls, in its order.
    private var polled: [OpaquePointer] = []
    private let events: Events
    private let limits: DBusLimits
    private var connection: OpaquePointer?
    private var watches: [OpaquePointer] = []
    private var timeouts: [(timeout: OpaquePointer, deadline: ContinuousClock.Instant?)] = []
    private var pending: [UInt64: PendingCall] = [:]
    private var running = true
    private(set) var uniqueName = ""

    /// Opens the connection on a new pump thread; returns once it is registered on the bus.
    static func start(_ address: Address, limits: DBusLimits, events: Events) async throws(DBusError) -> Pump {
        // Messages are built on callers' threads: libdbus's global locks must be real ones.
        guard dbus_threads_init_default() != 0 else { throw DBusError(.noMemory, "dbus_threads_init_default") }
        let pump = Pump(address, limits: limits, events: events)
        let result: Result<Void, DBusError> = await HandOff.await { done in pump.spawn(opened: done) }
        try result.get()
        return pump
    }

    private init(_ address: Address, limits: DBusLimits, events: Events) {
        self.address = address
        self.events = events
        self.limits = limits
    }

    /// Queues a command and wakes the pump; after the end, fails it at once.
    func submit(_ command: Command) {
        let queued = inbox.withLock { queue -> Bool in
            queue?.append(command)
            return queue != nil
        }
        guard queued else {
            Self.refuse(command)
            return
        }
        // Before the thread runs, its start takes the command.
        thread.withLock { $0 }?.poke()
    }

    private func spawn(opened: @escaping @Sendable (Result<Void, DBusError>) -> Void) {
        self.opened = opened
        do {
            _ = try DescriptorThread(name: "gaend-dbus", work: self)
        } catch {
            opened(.failure(DBusError(.failed, "starting the pump's thread: \(error)")))
        }
    }

    private func open(_ address: Address) throws(DBusError) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        func failure(_ what: String) -> DBusError {
            if dbus_error_is_set(&error) != 0 {
                return DBusError(DBusError.Name(rawValue: String(cString: error.name)), String(cString: error.message))
            }
            return DBusError(.failed, what)
        }
        let opened: OpaquePointer?
        switch address {
        case .system: opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let text):
            opened = dbus_connection_open_private(text, &error)
            if let opened, dbus_bus_register(opened, &error) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw failure("registering on the bus at \(text)")
            }
        }
        guard let opened else { throw failure("connecting to the bus") }
        connection = opened
        // A daemon decides for itself what losing the bus means; libdbus would _exit(1).
        dbus_connection_set_exit_on_disconnect(opened, 0)
        // See DBusLimits: the received-size bound is back pressure; a message-size bound disconnects.
        dbus_connection_set_max_received_size(opened, limits.maximumReceivedSize)
        if let maximum = limits.maximumMessageSize { dbus_connection_set_max_message_size(opened, maximum) }
        uniqueName = dbus_bus_get_unique_name(opened).map { String(cString: $0) } ?? ""
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard dbus_connection_set_watch_functions(opened, Trampolines.addWatch, Trampolines.removeWatch, Trampolines.toggleWatch, me, nil) != 0,
            dbus_connection_set_timeout_functions(opened, Trampolines.addTimeout, Trampolines.removeTimeout, Trampolines.toggleTimeout, me, nil) != 0,
            dbus_connection_add_filter(opened, Trampolines.filter, me, nil) != 0
        else {
            dbus_connection_close(opened)
            dbus_connection_unref(opened)
            connection = nil
            throw DBusError(.noMemory, "installing the main loop functions")
        }
    }

    private func dispatchAll() {
        guard let connection else { return }
        while running, dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    private func handleCommands() {
        let commands = inbox.withLock { queue in
            defer { queue = queue == nil ? nil : [] }
            return queue ?? []
        }
        for command in commands {
            switch command {
            case .send(let message, let reply, let id, let timeout):
                send(message.pointer, reply: reply, id: id, timeout: timeout)
            case .cancel(let id):
                if let call = pending.removeValue(forKey: id) {
                    dbus_pending_call_cancel(call.pointer)
                    call.complete(.failure(DBusError(.noReply, "cancelled")))
                }
            case .close:
                running = false
            }
        }
    }

    private func send(_ message: OpaquePointer, reply: ReplyHandler?, id: UInt64, timeout: Int32) {
        defer { dbus_message_unref(message) }
        guard let connection, running else {
            reply?(.failure(DBusError(.disconnected, "the connection is closed")))
            return
        }
        guard let reply else {
            // Fails only without memory, which libdbus reports on stderr.
            _ = dbus_connection_send(connection, message, nil)
            return
        }
        var pendingPointer: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message, &pendingPointer, timeout) != 0 else {
            reply(.failure(DBusError(.noMemory, "sending a call")))
            return
        }
        guard let pendingPointer else {
            reply(.failure(DBusError(.disconnected, "the connection is closed")))
            return
        }
        let call = PendingCall(id: id, pointer: pendingPointer, handler: reply)
        pending[id] = call
        let box = Unmanaged.passRetained(PendingBox(pump: self, id: id)).toOpaque()
        dbus_pending_call_set_notify(pendingPointer, Trampolines.pendingNotify, box, Trampolines.releasePendingBox)
        // A call that completed before the notify was set (the connection closing) notifies nobody.
        if dbus_pending_call_get_completed(pendingPointer) != 0 { completed(id) }
    }

    /// The pending call `id` has its reply (or libdbus's NoReply after the timeout).
    fileprivate func completed(_ id: UInt64) {
        guard let call = pending.removeValue(forKey: id) else { return }
        guard let reply = dbus_pending_call_steal_reply(call.pointer) else {
            call.complete(.failure(DBusError(.noReply, "no reply")))
            return
        }
        defer { dbus_message_unref(reply) }
        do {
            let message = try Marshalling.decode(reply, limits: limits)
            if let error = message.error {
                call.complete(.failure(error))
            } else {
                call.complete(.success(message))
            }
        } catch {
            call.complete(.failure(error))
        }
    }

    /// A message that is not a reply to a pending call. Its header decides first: what the
    /// connection does not route is dropped or refused before the body is read (issue 16: a 33 MB
    /// `ay` to nobody cost a decoding, 1.1 GB and seconds of the pump).
    fileprivate func incoming(_ message: OpaquePointer) -> DBusHandlerResult {
        guard let header = Self.header(message) else { return DBUS_HANDLER_RESULT_HANDLED }
        if header.kind == .signal, header.interface == StandardInterfaces.local, header.member == "Disconnected" {
            running = false
            return DBUS_HANDLER_RESULT_HANDLED
        }
        switch events.disposition(header) {
        case .drop:
            return DBUS_HANDLER_RESULT_HANDLED
        case .refuse(let error):
            refuse(message, error)
            return DBUS_HANDLER_RESULT_HANDLED
        case .decode:
            break
        }
        let decoded: DBusMessage
        do {
            decoded = try Marshalling.decode(message, limits: limits)
        } catch {
            refuse(message, error)
            return DBUS_HANDLER_RESULT_HANDLED
        }
        events.message(decoded)
        // Method calls are answered by the connection (an error for what nothing exports).
        return decoded.kind == .methodCall ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    /// Answers a call with `error`, unless it wants no reply; other messages get nothing.
    private func refuse(_ message: OpaquePointer, _ error: DBusError) {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL, dbus_message_get_no_reply(message) == 0, let connection,
            let reply = dbus_message_new_error(message, error.name.rawValue, error.message)
        else { return }
        dbus_connection_send(connection, reply, nil)
        dbus_message_unref(reply)
    }

    /// The header fields of `message`; nil for a message type this side does not know.
    static func header(_ message: OpaquePointer) -> Header? {
        guard let kind = Marshalling.kind(of: message) else { return nil }
        func string(_ characters: UnsafePointer<CChar>?) -> String? { characters.map { String(cString: $0) } }
        return Header(
            kind: kind, path: string(dbus_message_get_path(message)), interface: string(dbus_message_get_interface(message)),
            member: string(dbus_message_get_member(message)), sender: string(dbus_message_get_sender(message)),
            signature: string(dbus_message_get_signature(message)) ?? "",
            arg0: {
                var iterator = DBusMessageIter()
                guard dbus_message_iter_init(message, &iterator) != 0, dbus_message_iter_get_arg_type(&iterator) == cgaend_dbus_type_string else {
                    return nil
                }
                var characters: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&iterator, &characters)
                guard let characters, strlen(characters) <= 4096 else { return nil }
                return String(cString: characters)
            })
    }

    /// The watches libdbus enables, and the nearest timeout: what the next wait polls.
    private func waitForWatches() -> DescriptorThread.Wait {
        polled = watches.filter { dbus_watch_get_enabled($0) != 0 }
        let descriptors = polled.map { watch -> (fd: Int32, events: PollEvents) in
            let flags = dbus_watch_get_flags(watch)
            var events: PollEvents = []
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.readable) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.writable) }
            return (dbus_watch_get_unix_fd(watch), events)
        }
        var wait: Int32 = -1
        if let nextDeadline = timeouts.compactMap(\.deadline).min() {
            let remaining = nextDeadline - ContinuousClock.now
            wait = remaining <= .zero ? 0 : Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
        }
        return DescriptorThread.Wait(descriptors, milliseconds: wait)
    }

    /// What the wait found: the ready watches handled, then the timeouts that are due.
    private func handleWatches(_ ready: [PollEvents]) {
        for (index, watch) in polled.enumerated() {
            let revents = ready[index]
            guard !revents.isEmpty, watches.contains(watch) else { continue }
            var flags: UInt32 = 0
            if revents.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
            if revents.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
            if revents.contains(.hangUp) { flags |= DBUS_WATCH_HANGUP.rawValue }
            if revents.contains(.error) { flags |= DBUS_WATCH_ERROR.rawValue }
            dbus_watch_handle(watch, flags)
            if flags == DBUS_WATCH_READABLE.rawValue { keepReading(watch) }
        }
        let after = ContinuousClock.now
        for entry in timeouts where entry.deadline.map({ $0 <= after }) ?? false {
            // An earlier handler in this loop may have removed (and libdbus freed) it.
            guard timeouts.contains(where: { $0.timeout == entry.timeout }) else { continue }
            // Re-armed first: the handler may remove or toggle it.
            setTimeout(entry.timeout)
            dbus_timeout_handle(entry.timeout)
        }
    }

    /// libdbus reads at most about 4 KB per `dbus_watch_handle`. While a large message is still
    /// arriving (nothing to dispatch yet), this reads on without a turn of the whole loop for every
    /// 4 KB, which made a 33 MB message hold up a call behind it by 0.2 s; after 1,024 reads (4 MB)
    /// the loop gets its turn, so queued sends are not held up either.
    private func keepReading(_ watch: OpaquePointer) {
        guard let connection else { return }
        for _ in 0..<1024 {
            guard watches.contains(watch), dbus_watch_get_enabled(watch) != 0,
                dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_COMPLETE
            else { return }
            guard let ready = try? SystemCall.poll([(dbus_watch_get_unix_fd(watch), .readable)], milliseconds: 0), ready[0] == .readable else { return }
            dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
        }
    }

    private func shutDown() {
        let calls = pending.values
        pending.removeAll()
        for call in calls {
            dbus_pending_call_cancel(call.pointer)
            call.complete(.failure(DBusError(.disconnected, "the connection closed before the reply")))
        }
        if let connection {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            self.connection = nil
        }
        // Commands queued before the end fail; later ones are refused by `submit`.
        let left = inbox.withLock { queue in
            defer { queue = nil }
            return queue ?? []
        }
        for command in left { Self.refuse(command) }
        events.disconnected()
    }

    private static func refuse(_ command: Command) {
        if case .send(let message, let reply, _, _) = command {
            dbus_message_unref(message.pointer)
            reply?(.failure(DBusError(.disconnected, "the connection is closed")))
        }
    }

    // MARK: Watches and timeouts (called by libdbus on the pump thread)

    fileprivate func addWatch(_ watch: OpaquePointer) { watches.append(watch) }
    fileprivate func removeWatch(_ watch: OpaquePointer) { watches.removeAll { $0 == watch } }

    fileprivate func setTimeout(_ timeout: OpaquePointer) {
        let deadline: ContinuousClock.Instant? =
            dbus_timeout_get_enabled(timeout) != 0 ? .now.advanced(by: .milliseconds(dbus_timeout_get_interval(timeout))) : nil
        if let index = timeouts.firstIndex(where: { $0.timeout == timeout }) {
            timeouts[index].deadline = deadline
        } else {
            timeouts.append((timeout, deadline))
        }
    }

    fileprivate func removeTimeout(_ timeout: OpaquePointer) { timeouts.removeAll { $0.timeout == timeout } }
}

// MARK: The pump thread

extension Pump: DescriptorWork {
    /// Opens the connection and tells the caller, then takes what was queued meanwhile.
    func start(on thread: DescriptorThread) -> Bool {
        self.thread.withLock { $0 = thread }
        do {
            try open(address)
        } catch {
            opened?(.failure(error))
            opened = nil
            return false
        }
        started = true
        opened?(.success(()))
        opened = nil
        dispatchAll()
        handleCommands()
        return running
    }

    func nextWait() -> DescriptorThread.Wait { waitForWatches() }

    func handle(_ turn: DescriptorThread.Turn) -> Bool {
        handleWatches(turn.events)
        dispatchAll()
        handleCommands()
        return running
    }

    func finish() {
        if started {
            shutDown()
        } else {
            inbox.withLock { $0 = nil }
        }
    }
}

/// A call waiting for its reply.
private final class PendingCall {
    let id: UInt64
    let pointer: OpaquePointer
    let handler: Pump.ReplyHandler

    init(id: UInt64, pointer: OpaquePointer, handler: @escaping Pump.ReplyHandler) {
        self.id = id
        self.pointer = pointer
        self.handler = handler
    }

    func complete(_ result: Result<DBusMessage, DBusError>) {
        handler(result)
    }

    deinit { dbus_pending_call_unref(pointer) }
}

/// The notify function's user data: which call of which pump.
private final class PendingBox {
    unowned let pump: Pump
    let id: UInt64
    init(pump: Pump, id: UInt64) {
        self.pump = pump
        self.id = id
    }
}

/// The C callbacks: each recovers its Swift object from the user data and calls it.
private enum Trampolines {
    static func pump(_ data: UnsafeMutableRawPointer?) -> Pump { Unmanaged<Pump>.fromOpaque(data!).takeUnretainedValue() }

    static let addWatch: DBusAddWatchFunction = { watch, data in
        pump(data).addWatch(watch!)
        return 1
    }
    static let removeWatch: DBusRemoveWatchFunction = { watch, data in pump(data).removeWatch(watch!) }
    // Enabled state is read at each poll.
    static let toggleWatch: DBusWatchToggledFunction = { _, _ in }
    static let addTimeout: DBusAddTimeoutFunction = { timeout, data in
        pump(data).setTimeout(timeout!)
        return 1
    }
    static let removeTimeout: DBusRemoveTimeoutFunction = { timeout, data in pump(data).removeTimeout(timeout!) }
    static let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in pump(data).setTimeout(timeout!) }
    static let filter: DBusHandleMessageFunction = { _, message, data in pump(data).incoming(message!) }
    static let pendingNotify: DBusPendingCallNotifyFunction = { _, data in
        let box = Unmanaged<PendingBox>.fromOpaque(data!).takeUnretainedValue()
        box.pump.completed(box.id)
    }
    static let releasePendingBox: DBusFreeFunction = { data in Unmanaged<PendingBox>.fromOpaque(data!).release() }
}
