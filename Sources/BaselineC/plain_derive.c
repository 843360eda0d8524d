// SPDX-License-Identifier: GPL-3.0-or-later
#include "BaselineC.h"
#include "fold.h"

#include <string.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

int cgaend_bench_plain_derive(const uint8_t *teks, const uint32_t *starts, size_t count, uint8_t *xor_out) {
    static const unsigned char info[] = "EN-RPIK";
    unsigned char padded[144 * 16];
    unsigned char rpis[144 * 16];
    unsigned char rpik[16];
    memset(xor_out, 0, 16);
    EVP_CIPHER_CTX *cipher = EVP_CIPHER_CTX_new();
    if (cipher == NULL) return -1;
    int status = 0;
    for (size_t k = 0; k < count && status == 0; k++) {
        EVP_PKEY_CTX *kdf = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
        size_t length = sizeof rpik;
        if (kdf == NULL || EVP_PKEY_derive_init(kdf) != 1 || EVP_PKEY_CTX_set_hkdf_md(kdf, EVP_sha256()) != 1 ||
            EVP_PKEY_CTX_set1_hkdf_key(kdf, teks + 16 * k, 16) != 1 ||
            EVP_PKEY_CTX_add1_hkdf_info(kdf, info, 7) != 1 || EVP_PKEY_derive(kdf, rpik, &length) != 1) {
            status = -1;
        }
        EVP_PKEY_CTX_free(kdf);
        if (status != 0) break;
        for (int j = 0; j < 144; j++) {
            uint32_t enin = starts[k] + (uint32_t)j;
            memcpy(padded + 16 * j, "EN-RPI\0\0\0\0\0\0", 12);
            padded[16 * j + 12] = (unsigned char)(enin);
            padded[16 * j + 13] = (unsigned char)(enin >> 8);
            padded[16 * j + 14] = (unsigned char)(enin >> 16);
            padded[16 * j + 15] = (unsigned char)(enin >> 24);
        }
        int written = 0;
        if (EVP_EncryptInit_ex(cipher, EVP_aes_128_ecb(), NULL, rpik, NULL) != 1 ||
            EVP_CIPHER_CTX_set_padding(cipher, 0) != 1 ||
            EVP_EncryptUpdate(cipher, rpis, &written, padded, (int)sizeof padded) != 1 || written != (int)sizeof rpis) {
            status = -1;
            break;
        }
        fold(rpis, xor_out);
    }
    EVP_CIPHER_CTX_free(cipher);
    return status;
}
