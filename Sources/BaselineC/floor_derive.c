// SPDX-License-Identifier: GPL-3.0-or-later
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "BaselineC.h"
#include "fold.h"

#include <string.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

/// The floor's loop; with `filter` non-NULL each key's 144 RPIs are also probed as gaend's day filters
/// probe them (`DayFilters.candidates`: one multiply of the folded words, the word from the top
/// bits, the bit pair from a 256-entry table), and the passes counted into `*candidates`.
static int floor_loop(const uint8_t *teks, const uint32_t *starts, size_t count, uint8_t *xor_out, const uint64_t *filter, unsigned shift,
                      uint64_t seed0, uint64_t seed1, size_t *candidates) {
    uint64_t pairs[256];
    static const int offsets[4] = {1, 17, 29, 43};
    for (int i = 0; i < 256; i++) pairs[i] = (1ull << (i & 63)) | (1ull << (((i & 63) + offsets[i >> 6]) & 63));
    static const unsigned char info[8] = {'E', 'N', '-', 'R', 'P', 'I', 'K', 0x01};
    unsigned char pad[64], prk[32], digest[32];
    unsigned char padded[144 * 16];
    unsigned char rpis[144 * 16];
    uint32_t padded_start = 0;
    int padded_valid = 0;
    SHA256_CTX inner_after_pad, outer_after_pad, context;

    memset(pad, 0x36, sizeof pad);
    SHA256_Init(&inner_after_pad);
    SHA256_Update(&inner_after_pad, pad, 64);
    memset(pad, 0x5c, sizeof pad);
    SHA256_Init(&outer_after_pad);
    SHA256_Update(&outer_after_pad, pad, 64);

    memset(xor_out, 0, 16);
    EVP_CIPHER *ecb = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
    EVP_CIPHER_CTX *cipher = EVP_CIPHER_CTX_new();
    int status = (ecb != NULL && cipher != NULL && EVP_EncryptInit_ex2(cipher, ecb, pad, NULL, NULL) == 1 &&
                  EVP_CIPHER_CTX_set_padding(cipher, 0) == 1) ? 0 : -1;
    for (size_t k = 0; k < count && status == 0; k++) {
        // Extract: HMAC(zero salt, TEK) from the copied midstates.
        context = inner_after_pad;
        SHA256_Update(&context, teks + 16 * k, 16);
        SHA256_Final(prk, &context);
        context = outer_after_pad;
        SHA256_Update(&context, prk, 32);
        SHA256_Final(prk, &context);
        // Expand: HMAC(prk, "EN-RPIK" || 0x01), first 16 bytes.
        for (int i = 0; i < 32; i++) pad[i] = prk[i] ^ 0x36;
        memset(pad + 32, 0x36, 32);
        SHA256_Init(&context);
        SHA256_Update(&context, pad, 64);
        SHA256_Update(&context, info, sizeof info);
        SHA256_Final(digest, &context);
        for (int i = 0; i < 32; i++) pad[i] = prk[i] ^ 0x5c;
        memset(pad + 32, 0x5c, 32);
        SHA256_Init(&context);
        SHA256_Update(&context, pad, 64);
        SHA256_Update(&context, digest, 32);
        SHA256_Final(digest, &context);

        if (!padded_valid || padded_start != starts[k]) {
            for (int j = 0; j < 144; j++) {
                uint32_t enin = starts[k] + (uint32_t)j;
                memcpy(padded + 16 * j, "EN-RPI", 6);
                memset(padded + 16 * j + 6, 0, 6);
                padded[16 * j + 12] = (unsigned char)(enin);
                padded[16 * j + 13] = (unsigned char)(enin >> 8);
                padded[16 * j + 14] = (unsigned char)(enin >> 16);
                padded[16 * j + 15] = (unsigned char)(enin >> 24);
            }
            padded_start = starts[k];
            padded_valid = 1;
        }
        int written = 0;
        if (EVP_EncryptInit_ex2(cipher, NULL, digest, NULL, NULL) != 1 ||
            EVP_EncryptUpdate(cipher, rpis, &written, padded, (int)sizeof padded) != 1 || written != (int)sizeof rpis) {
            status = -1;
            break;
        }
        if (filter != NULL) {
            size_t found = 0;
            for (int j = 0; j < 144; j++) {
                uint64_t w0, w1;
                memcpy(&w0, rpis + 16 * j, 8);
                memcpy(&w1, rpis + 16 * j + 8, 8);
                uint64_t hash = (w0 ^ w1 ^ seed0) * seed1;
                uint64_t bits = pairs[(hash >> 32) & 0xFF];
                if ((filter[hash >> shift] & bits) == bits) found++;
            }
            *candidates += found;
        } else {
            fold(rpis, xor_out);
        }
    }
    EVP_CIPHER_CTX_free(cipher);
    EVP_CIPHER_free(ecb);
    return status;
}

int cgaend_bench_floor_derive(const uint8_t *teks, const uint32_t *starts, size_t count, uint8_t *xor_out) {
    return floor_loop(teks, starts, count, xor_out, NULL, 0, 0, 0, NULL);
}

int cgaend_bench_floor_probe(const uint8_t *teks, const uint32_t *starts, size_t count, const uint64_t *filter, unsigned shift, uint64_t seed0,
                             uint64_t seed1, size_t *candidates) {
    uint8_t xor_out[16];
    *candidates = 0;
    return floor_loop(teks, starts, count, xor_out, filter, shift, seed0, seed1, candidates);
}
