// SPDX-License-Identifier: GPL-3.0-or-later
// Makes Swift's Synchronization.Mutex visible to ThreadSanitizer on Linux (LD_PRELOADed by
// `make check-tsan` only; never linked into anything that ships).
//
// Why: Mutex's fast paths are inlined into our (instrumented) code, but a contended lock is taken
// and handed over in `_MutexHandle._lockSlow` / `_unlockSlow` inside libswiftSynchronization.so,
// which is not instrumented (futex calls and atomics TSan never sees). Two threads that take turns
// on a contended Mutex then look unordered, and every state a Mutex guards is reported as a race:
// a 20-line program of two withLock callers gets "Swift access race" reports without this file
// and none with it, while an unguarded variable beside it is still reported.
//
// How: the two slow paths are wrapped. The lock is owned once the real `_lockSlow` returns, so
// that is an acquire of the lock word; `_unlockSlow` releases it, so the release comes first.
// Both are Swift methods of a ~Copyable struct: self (the address of the lock word) travels in the
// swiftself register, which clang's swiftcall convention names `swift_context`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

// Weak: children that are not built with TSan (python, dbus-daemon) inherit LD_PRELOAD too.
__attribute__((weak)) void __tsan_acquire(void *address);
__attribute__((weak)) void __tsan_release(void *address);

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))
#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCALL void (*lock_slow_function)(uint32_t, void *SWIFT_SELF);
typedef SWIFTCALL void (*unlock_slow_function)(void *SWIFT_SELF);

SWIFTCALL void gaend_tsan_lock_slow(uint32_t owner, void *SWIFT_SELF handle) __asm__(LOCK_SLOW);
SWIFTCALL void gaend_tsan_unlock_slow(void *SWIFT_SELF handle) __asm__(UNLOCK_SLOW);

SWIFTCALL void gaend_tsan_lock_slow(uint32_t owner, void *SWIFT_SELF handle) {
    static lock_slow_function real;
    if (!real) real = (lock_slow_function)dlsym(RTLD_NEXT, LOCK_SLOW);
    real(owner, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFTCALL void gaend_tsan_unlock_slow(void *SWIFT_SELF handle) {
    static unlock_slow_function real;
    if (!real) real = (unlock_slow_function)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    real(handle);
}
