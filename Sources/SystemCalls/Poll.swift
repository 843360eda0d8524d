// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// What poll(2) is asked to wait for on a descriptor, and what it found.
public struct PollEvents: OptionSet, Hashable, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// Reported whether asked or not.
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    public static let error = PollEvents(rawValue: Int16(POLLERR))
}

extension SystemCall {
    /// Waits until one of `descriptors` has what it is asked for, or `milliseconds` pass (-1: no
    /// limit); answers what each one has, in order (empty when nothing). EINTR is thrown, not
    /// retried: a caller with deadlines works out its wait again.
    public static func poll(_ descriptors: [(fd: Int32, events: PollEvents)], milliseconds: Int32) throws(Errno) -> [PollEvents] {
        var entries = descriptors.map { pollfd(fd: $0.fd, events: $0.events.rawValue, revents: 0) }
        guard Glibc.poll(&entries, nfds_t(entries.count), milliseconds) >= 0 else { throw Errno.current }
        return entries.map { PollEvents(rawValue: $0.revents) }
    }
}
