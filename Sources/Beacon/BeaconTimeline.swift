// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import GaendConfiguration
import KeySchedule

/// The beacon's schedule, the same for every back end: scan windows, and rotations between them.
enum BeaconTimeline {
    /// One loop owns the radio's timeline. Controllers refuse LE Set Random Address while scanning
    /// as well as while advertising (Core Vol 4 Part E 7.8.4), so rotations happen between scan
    /// windows; a window is cut short when a rotation falls due, so the rotation timer and the
    /// UTC-midnight key change are kept to the second. Runs until cancelled or a radio error.
    /// The pause between windows (`scan-interval`) is drawn from `random`. Without an advertiser
    /// (scanning only) there is no rotation.
    static func run<C: Clock>(
        advertiser: Advertiser?, scanner: Scanner, settings: RadioSettings, clock monotonic: C, random: any RandomBytesSource
    ) async throws where C.Duration == Duration {
        var generator = RandomSourceGenerator(random)
        // A day stands for "never" without an advertiser: no window is that long.
        var rotationDue = monotonic.now.advanced(by: .seconds(await advertiser?.nextRotationDelay() ?? 86_400))
        // The key replaced before its time (a release, a reset) makes the rotation due at once:
        // its RPI must not stay on the air (issue 53). Counted from the one on the air now.
        let replacements = advertiser?.keyReplacements
        var replacementsSeen = replacements?.current ?? 0
        func rotateIfDue() async throws {
            guard monotonic.now >= rotationDue else { return }
            guard let advertiser else {
                rotationDue = monotonic.now.advanced(by: .seconds(86_400))
                return
            }
            let seen = advertiser.keyReplacements.current
            try await advertiser.rotate()
            replacementsSeen = seen
            rotationDue = monotonic.now.advanced(by: .seconds(await advertiser.nextRotationDelay()))
        }
        func sleep(atMost duration: Duration) async throws {
            let until = min(monotonic.now.advanced(by: duration), rotationDue)
            guard until > monotonic.now else { return }
            guard let replacements else { return try await monotonic.sleep(until: until, tolerance: nil) }
            // The sleep and the wait for a replacement race; the first to end ends both.
            let seen = replacementsSeen
            let replaced = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await monotonic.sleep(until: until, tolerance: nil)
                    return false
                }
                group.addTask {
                    await replacements.wait(past: seen)
                    return !Task.isCancelled
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            if replaced { rotationDue = monotonic.now }
        }
        while true {
            try await rotateIfDue()
            try await scanner.beginWindow()
            try await sleep(atMost: .milliseconds(Int(settings.scanWindowSeconds * 1000)))
            try await scanner.endWindow()
            try await rotateIfDue()
            if let interval = settings.scanInterval {
                try await sleep(atMost: .seconds(Int.random(in: interval, using: &generator)))
            }
        }
    }
}
