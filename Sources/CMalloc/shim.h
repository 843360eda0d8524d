// SPDX-License-Identifier: GPL-3.0-or-later
// glibc's allocator options, which Swift's Glibc module leaves out: M_MMAP_THRESHOLD and
// M_ARENA_MAX are macros of malloc.h. Only SystemCalls imports this (MemoryPolicy).
#ifndef GAEND_CMALLOC_SHIM_H
#define GAEND_CMALLOC_SHIM_H
#include <malloc.h>

// mallopt(M_MMAP_THRESHOLD, bytes); returns mallopt's result (1 on success).
static inline int cgaend_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

// mallopt(M_ARENA_MAX, arenas): at most that many malloc arenas for all threads.
static inline int cgaend_set_arena_max(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
#endif
