// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import SystemCalls
import Testing

/// The kernel's answers, read back by an independent reader (Python's ctypes calling adjtimex).
struct KernelClockTests {
    @Test func synchronizationIsWhatAdjtimexSays() throws {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = [
            "-c",
            """
            import ctypes
            class Timex(ctypes.Structure):
                _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long), ("maxerror", ctypes.c_long),
                            ("esterror", ctypes.c_long), ("status", ctypes.c_int), ("pad", ctypes.c_byte * 200)]
            t = Timex()
            ctypes.CDLL(None, use_errno=True).adjtimex(ctypes.byref(t))
            print(t.maxerror, t.status & 0x40)
            """,
        ]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        python.waitUntilExit()
        let fields = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        try #require(fields.count == 2)
        let state = KernelClock.synchronization()
        // maxerror grows 500 µs a second: the two reads may be a few apart.
        #expect(abs(state.maximumErrorMicroseconds - (Int(fields[0]) ?? -1)) < 100_000)
        #expect(state.unsynchronizedBit == (fields[1].trimmingCharacters(in: .whitespacesAndNewlines) != "0"))
        #expect(state.synchronized == (!state.unsynchronizedBit || state.maximumErrorMicroseconds < 16_000_000))
    }

    @Test func eitherSignOfATimeDaemonIsSynchronization() {
        // This machine's state: neither (STA_UNSYNC, 16 s).
        #expect(!KernelClock.Synchronization(maximumErrorMicroseconds: 16_000_000, unsynchronizedBit: true).synchronized)
        // chrony without rtcsync: STA_UNSYNC kept, the error small.
        #expect(KernelClock.Synchronization(maximumErrorMicroseconds: 12_000, unsynchronizedBit: true).synchronized)
        // A daemon that cleared STA_UNSYNC when it stepped, before it set the error.
        #expect(KernelClock.Synchronization(maximumErrorMicroseconds: 16_000_000, unsynchronizedBit: false).synchronized)
    }

    @Test func theBootClockAndTheBootID() throws {
        let first = KernelClock.bootMilliseconds()
        #expect(first > 0)
        #expect(KernelClock.bootMilliseconds() >= first)
        let id = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(KernelClock.bootID() == id)
    }

    @Test func anUnsetClockGivesTheStepWatchNothingToRead() throws {
        let steps = try WallClockSteps()
        #expect(try SystemCall.poll([(steps.descriptor, .readable)], milliseconds: 0) == [[]])
        #expect(try steps.consume() == false)
    }
}
