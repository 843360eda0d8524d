// SPDX-License-Identifier: GPL-3.0-or-later

internal import CGaendShims

/// How the daemon's allocator hands memory back (DESIGN: peak RSS under 100 MB under any input).
///
/// glibc serves allocations above its mmap threshold with their own mappings and unmaps them on
/// free, but it raises the threshold to the size of each such block freed (up to 32 MiB). After one
/// detection freed a 14 MB archive, the next run's buffers of that size came from the heap, where
/// freed memory stays resident: the worst key file the limits let through peaked at 112 MB with
/// the dynamic threshold and at 96 MB with a fixed one (docs/key-files.md, "Memory"). A fixed
/// threshold of 1 MiB keeps every large buffer (archives, export.bin, D-Bus bodies) returned to the
/// system when freed; small allocations are unaffected.
package enum MemoryPolicy {
    package static let mmapThreshold: Int32 = 1 << 20

    package static func apply() {
        _ = cgaend_set_mmap_threshold(mmapThreshold)
    }
}
