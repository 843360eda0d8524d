// SPDX-License-Identifier: GPL-3.0-or-later
#include "BaselineC.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

typedef struct {
    size_t mask;
    uint8_t *slots;  // 17 bytes each: a used flag and the RPI
} rpi_set;

static uint64_t first_word(const uint8_t *rpi) {
    uint64_t word;
    memcpy(&word, rpi, 8);
    return word;
}

void *cgaend_bench_set_build(const uint8_t *rpis, size_t count) {
    size_t size = 16;
    while (size < count * 2) size <<= 1;
    rpi_set *set = malloc(sizeof *set);
    if (set == NULL) return NULL;
    set->mask = size - 1;
    set->slots = calloc(size, 17);
    if (set->slots == NULL) { free(set); return NULL; }
    for (size_t i = 0; i < count; i++) {
        size_t slot = first_word(rpis + 16 * i) & set->mask;
        while (set->slots[17 * slot] && memcmp(set->slots + 17 * slot + 1, rpis + 16 * i, 16) != 0) slot = (slot + 1) & set->mask;
        set->slots[17 * slot] = 1;
        memcpy(set->slots + 17 * slot + 1, rpis + 16 * i, 16);
    }
    return set;
}

void cgaend_bench_set_free(void *pointer) {
    rpi_set *set = pointer;
    if (set == NULL) return;
    free(set->slots);
    free(set);
}

static int set_contains(const rpi_set *set, const uint8_t *rpi) {
    size_t slot = first_word(rpi) & set->mask;
    while (set->slots[17 * slot]) {
        if (memcmp(set->slots + 17 * slot + 1, rpi, 16) == 0) return 1;
        slot = (slot + 1) & set->mask;
    }
    return 0;
}

long cgaend_bench_plain_match(const uint8_t *teks, const uint32_t *starts, size_t count, const void *set) {
    static const unsigned char zeros[32] = {0};
    static const unsigned char info[8] = {'E', 'N', '-', 'R', 'P', 'I', 'K', 1};
    unsigned char prk[32], okm[32], padded[144 * 16], rpis[144 * 16];
    unsigned int length = 0;
    long matched = 0;
    EVP_CIPHER_CTX *cipher = EVP_CIPHER_CTX_new();
    if (cipher == NULL) return -1;
    for (size_t k = 0; k < count; k++) {
        if (HMAC(EVP_sha256(), zeros, 32, teks + 16 * k, 16, prk, &length) == NULL ||
            HMAC(EVP_sha256(), prk, 32, info, sizeof info, okm, &length) == NULL) {
            matched = -1;
            break;
        }
        for (int j = 0; j < 144; j++) {
            uint32_t enin = starts[k] + (uint32_t)j;
            memcpy(padded + 16 * j, "EN-RPI", 6);
            memset(padded + 16 * j + 6, 0, 6);
            memcpy(padded + 16 * j + 12, &enin, 4);  // little-endian hosts only, as this machine is
        }
        int written = 0;
        if (EVP_EncryptInit_ex(cipher, EVP_aes_128_ecb(), NULL, okm, NULL) != 1 || EVP_CIPHER_CTX_set_padding(cipher, 0) != 1 ||
            EVP_EncryptUpdate(cipher, rpis, &written, padded, (int)sizeof padded) != 1) {
            matched = -1;
            break;
        }
        int hit = 0;
        for (int j = 0; j < 144; j++) hit |= set_contains(set, rpis + 16 * j);
        matched += hit;
    }
    EVP_CIPHER_CTX_free(cipher);
    return matched;
}
