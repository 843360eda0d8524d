// SPDX-License-Identifier: GPL-3.0-or-later
// The baseline gaen-bench compares ExposureKeyCrypto with: the libcrypto calls a plain C program
// makes to derive RPIs, with no tricks. Linked into gaen-bench only.
#ifndef GAEND_BASELINEC_H
#define GAEND_BASELINEC_H

#include <stddef.h>
#include <stdint.h>

/// For each of `count` keys (16 bytes each in `teks`, with rolling start `starts[i]`): RPIK by
/// EVP_PKEY HKDF-SHA256 and the 144 RPIs by one AES-128-ECB update. The XOR of every RPI is written to
/// `xor_out` (16 bytes) so the work cannot be optimised away and can be checked against Swift's.
/// Returns 0 on success, -1 if libcrypto failed.
int cgaend_bench_plain_derive(const uint8_t *teks, const uint32_t *starts, size_t count, uint8_t *xor_out);

/// The same work done the way ExposureKeyCrypto does it, in C: HKDF from SHA-256 midstates of the
/// constant salt copied per key, and one reused AES-128-ECB context re-keyed per key. This is the
/// floor for the Swift code: what is left between them is the cost of Swift, not of the method.
int cgaend_bench_floor_derive(const uint8_t *teks, const uint32_t *starts, size_t count, uint8_t *xor_out);

/// The floor with matching's probes: each key's 144 RPIs also asked of one blocked Bloom filter
/// (`filter`, 2^(64 - shift) words) exactly as gaend's day filters are asked, the passes counted
/// into `*candidates`. What gaend's matching costs beyond it is the cost of Swift and of the rest
/// of the matcher, not of the method.
int cgaend_bench_floor_probe(const uint8_t *teks, const uint32_t *starts, size_t count, const uint64_t *filter, unsigned shift, uint64_t seed0,
                             uint64_t seed1, size_t *candidates);

/// A plain open-addressing hash set of 16-byte RPIs (linear probing, the first 8 bytes as hash),
/// the "simple hash set" of the matching baseline. Returns NULL if memory runs out.
void *cgaend_bench_set_build(const uint8_t *rpis, size_t count);
void cgaend_bench_set_free(void *set);

/// The plain matching loop: for each key, HKDF by two one-shot HMAC-SHA256 calls, 144 RPIs with a
/// reused AES-128-ECB context, and a lookup of each in the set. Returns the number of keys with at
/// least one RPI in the set, or -1 if libcrypto failed.
long cgaend_bench_plain_match(const uint8_t *teks, const uint32_t *starts, size_t count, const void *set);

#endif
