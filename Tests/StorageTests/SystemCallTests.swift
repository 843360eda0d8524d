// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import GaendTestSupport
import SystemCalls
import Testing

/// The one syscall layer: errno in the system's words, the wake channel every poll loop uses,
/// unix addresses checked when made.
@Suite struct SystemCallTests {
    @Test func anErrnoSaysWhatItIs() {
        #expect(Errno.notFound.description == "No such file or directory (errno 2)")
        #expect(Errno(EWOULDBLOCK) == .wouldBlock)
    }

    @Test func aFailedCallThrowsItsErrnoAndAnInterruptedOneIsRetried() {
        #expect(throws: Errno.badDescriptor) { try SystemCall.retrying { Glibc.close(-1) } }
        var calls = 0
        let result = try? SystemCall.retrying { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
    }

    /// A wake makes the channel readable until drained; many wakes are one.
    @Test func theWakeChannelWakesAPollUntilDrained() throws {
        let channel = try WakeChannel()
        #expect(try SystemCall.poll([(channel.descriptor, .readable)], milliseconds: 0) == [[]])
        for _ in 0..<10_000 { channel.wake() }
        #expect(try SystemCall.poll([(channel.descriptor, .readable)], milliseconds: 0) == [.readable])
        channel.drain()
        #expect(try SystemCall.poll([(channel.descriptor, .readable)], milliseconds: 0) == [[]])
    }

    @Test func unixAddressesAreCheckedWhenMade() throws {
        #expect(UnixSocketAddress(String(repeating: "x", count: 108)) == nil)
        #expect(UnixSocketAddress("") == nil)
        #expect(UnixSocketAddress("@gaend-test")?.description == "@gaend-test")
        // Nothing listens there: the connect fails with the system's errno, no trap.
        let directory = try TemporaryDirectory()
        let fd = try SystemCall.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue))
        defer { SystemCall.close(fd) }
        #expect(throws: Errno.notFound) { try SystemCall.connect(fd, to: #require(UnixSocketAddress(directory.path + "/none"))) }
    }
}
