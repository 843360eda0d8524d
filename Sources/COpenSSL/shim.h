// SPDX-License-Identifier: GPL-3.0-or-later
// libcrypto (OpenSSL 3), as ENCrypto sees it. Only ENCrypto and the benchmark baseline import this.
#ifndef GAEND_COPENSSL_SHIM_H
#define GAEND_COPENSSL_SHIM_H

// The SHA-256 block functions are marked deprecated in OpenSSL 3 in favour of EVP_MD, but EVP_MD
// cannot copy a midstate without allocating (EVP_MD_CTX_copy_ex duplicates the provider context),
// and HKDF with a constant salt is exactly a copied midstate. The functions remain exported by
// libcrypto.so.3; silencing the attribute keeps the build free of noise.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#endif
