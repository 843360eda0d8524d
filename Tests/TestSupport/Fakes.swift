// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import ENCrypto
import Synchronization

/// A wall clock the test sets and advances.
package final class ManualClock: WallClock {
    private let time: Mutex<UnixTime>
    private let reason = Mutex<String?>(nil)

    package init(_ time: UnixTime) {
        self.time = Mutex(time)
    }

    package func now() -> UnixTime { time.withLock { $0 } }

    package var distrust: String? { reason.withLock { $0 } }

    /// Makes the clock untrusted for `reason` (nil: trusted again).
    package func distrust(_ reason: String?) { self.reason.withLock { $0 = reason } }

    package func set(_ newTime: UnixTime) { time.withLock { $0 = newTime } }

    package func advance(seconds: Int64) { time.withLock { $0 = $0.adding(seconds: seconds) } }
}

/// Key bytes 00 00 ... n: predictable, and different for every key.
package final class CountingRandom: RandomBytesSource {
    private let counter = Mutex<UInt8>(0)

    package init() {}

    package func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        let value = counter.withLock { count in
            count &+= 1
            return count
        }
        for index in buffer.indices { buffer[index] = 0 }
        buffer[buffer.count - 1] = value
    }
}

/// A random source that has run dry.
package struct FailingRandom: RandomBytesSource {
    package init() {}

    package func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        throw CryptoError(operation: "drawing random bytes", reason: "entropy source unavailable")
    }
}

extension UnixTime {
    /// 2020-04-02T00:00:00Z, interval 2642976: the vectors' key day.
    package static let vectorDay = UnixTime(seconds: 1_585_785_600)
}
