// SPDX-License-Identifier: GPL-3.0-or-later

internal import CMalloc

/// How gaend's and gaenctl's allocator hands memory back (DESIGN: peak RSS under 100 MB under any
/// input; the unit's MemoryMax=128M).
///
/// glibc serves allocations above its mmap threshold with their own mappings and unmaps them on
/// free, but it raises the threshold to the size of each such block freed (up to 32 MiB). After one
/// detection freed a 14 MB archive, the next run's buffers of that size came from the heap, where
/// freed memory stays resident: the worst key file the limits let through peaked at 112 MB with
/// the dynamic threshold and at 96 MB with a fixed one (docs/key-files.md, "Memory"). A fixed
/// threshold of 1 MiB keeps every large buffer (archives, export.bin, D-Bus bodies) returned to the
/// system when freed; small allocations are unaffected.
///
/// glibc also gives threads arenas of their own (up to 8 per core), and an arena keeps what was
/// freed in it: detection's matching tasks and the pool's threads each left a few MiB behind, and
/// the same detection peaked anywhere from 54 to 65 MiB from run to run. Two arenas (one per core
/// of a Pi Zero 2 W's four would be fewer still) keep the peak where the work puts it. gaenctl's
/// `tools match` applies it too: on the largest log the window cap allows, one index of a whole day
/// at a time, the freed indexes stayed resident without it (144 MiB against 88 MiB).
package enum MemoryPolicy {
    package static let mmapThreshold: Int32 = 1 << 20
    package static let arenas: Int32 = 2

    package static func apply() {
        _ = cgaend_set_mmap_threshold(mmapThreshold)
        _ = cgaend_set_arena_max(arenas)
    }
}
