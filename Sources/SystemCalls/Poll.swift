// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// What poll(2) is asked to wait for on a descriptor, and what it found.
package struct PollEvents: OptionSet, Hashable, Sendable {
    package let rawValue: Int16
    package init(rawValue: Int16) { self.rawValue = rawValue }

    package static let readable = PollEvents(rawValue: Int16(POLLIN))
    package static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// Reported whether asked or not.
    package static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    package static let error = PollEvents(rawValue: Int16(POLLERR))
}

extension SystemCall {
    /// Waits until one of `descriptors` has what it is asked for, or `milliseconds` pass (-1: no
    /// limit); answers what each one has, in order (empty when nothing). EINTR is thrown, not
    /// retried: a caller with deadlines works out its wait again.
    package static func poll(_ descriptors: [(fd: Int32, events: PollEvents)], milliseconds: Int32) throws(Errno) -> [PollEvents] {
        var entries = descriptors.map { pollfd(fd: $0.fd, events: $0.events.rawValue, revents: 0) }
        guard Glibc.poll(&entries, nfds_t(entries.count), milliseconds) >= 0 else { throw Errno.current }
        return entries.map { PollEvents(rawValue: $0.revents) }
    }
}
