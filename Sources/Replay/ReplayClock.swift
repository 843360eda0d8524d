// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Synchronization

/// The recording's time, set by the replay as it goes: the contact log's writer counts its days
/// and prunes by it, so a recording of 2020 is kept as the day it was made, not pruned as old.
final class ReplayClock: WallClock {
    private let time: Mutex<UnixTime>

    init(_ time: UnixTime) {
        self.time = Mutex(time)
    }

    func set(_ newTime: UnixTime) { time.withLock { $0 = newTime } }

    func now() -> UnixTime { time.withLock { $0 } }
}
