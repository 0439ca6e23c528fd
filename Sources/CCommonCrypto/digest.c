// CommonDigest and CommonHMAC on libcrypto's digests. The low-level SHA and MD5 functions are deprecated in
// OpenSSL 3 in favour of EVP, but they keep their state in the caller's structure, as Apple's contexts do: EVP's
// would need an allocation a CC_SHA256_CTX on the stack could not free.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "CommonCrypto.h"

#include <openssl/md5.h>
#include <openssl/sha.h>
#include <string.h>

_Static_assert(sizeof(CC_MD5_CTX) >= sizeof(MD5_CTX), "CC_MD5_CTX holds MD5_CTX");
_Static_assert(sizeof(CC_SHA1_CTX) >= sizeof(SHA_CTX), "CC_SHA1_CTX holds SHA_CTX");
_Static_assert(sizeof(CC_SHA256_CTX) >= sizeof(SHA256_CTX), "CC_SHA256_CTX holds SHA256_CTX");
_Static_assert(sizeof(CC_SHA512_CTX) >= sizeof(SHA512_CTX), "CC_SHA512_CTX holds SHA512_CTX");

// Each of Apple's four functions of a digest, on libcrypto's of the same digest (its context kept in Apple's).
#define NSE_CC_DIGEST(CC, CC_CTX, OSSL, OSSL_CTX)                                                                 \
    int CC##_Init(CC_CTX *c) { return OSSL##_Init((OSSL_CTX *)c); }                                                \
    int CC##_Update(CC_CTX *c, const void *data, CC_LONG len) { return OSSL##_Update((OSSL_CTX *)c, data, len); }  \
    int CC##_Final(unsigned char *md, CC_CTX *c) { return OSSL##_Final(md, (OSSL_CTX *)c); }                       \
    unsigned char *CC(const void *data, CC_LONG len, unsigned char *md) { return OSSL(data, len, md); }

NSE_CC_DIGEST(CC_MD5, CC_MD5_CTX, MD5, MD5_CTX)
NSE_CC_DIGEST(CC_SHA1, CC_SHA1_CTX, SHA1, SHA_CTX)
NSE_CC_DIGEST(CC_SHA224, CC_SHA256_CTX, SHA224, SHA256_CTX)
NSE_CC_DIGEST(CC_SHA256, CC_SHA256_CTX, SHA256, SHA256_CTX)
NSE_CC_DIGEST(CC_SHA384, CC_SHA512_CTX, SHA384, SHA512_CTX)
NSE_CC_DIGEST(CC_SHA512, CC_SHA512_CTX, SHA512, SHA512_CTX)

// MARK: - HMAC (RFC 2104), its state in the caller's CCHmacContext

union digest_state {
    MD5_CTX md5;
    SHA_CTX sha1;
    SHA256_CTX sha256;
    SHA512_CTX sha512;
};

struct hmac_state {
    CCHmacAlgorithm algorithm;
    uint32_t valid;
    unsigned char outer_key[SHA512_CBLOCK];  // the key XOR opad, one block
    union digest_state inner;
};

_Static_assert(sizeof(CCHmacContext) >= sizeof(struct hmac_state), "CCHmacContext holds the HMAC state");

// The digest's output and block sizes; 0 for an algorithm Apple does not define.
static size_t digest_length(CCHmacAlgorithm algorithm) {
    switch (algorithm) {
    case kCCHmacAlgMD5: return MD5_DIGEST_LENGTH;
    case kCCHmacAlgSHA1: return SHA_DIGEST_LENGTH;
    case kCCHmacAlgSHA224: return SHA224_DIGEST_LENGTH;
    case kCCHmacAlgSHA256: return SHA256_DIGEST_LENGTH;
    case kCCHmacAlgSHA384: return SHA384_DIGEST_LENGTH;
    case kCCHmacAlgSHA512: return SHA512_DIGEST_LENGTH;
    default: return 0;
    }
}

static size_t block_length(CCHmacAlgorithm algorithm) {
    return algorithm == kCCHmacAlgSHA384 || algorithm == kCCHmacAlgSHA512 ? SHA512_CBLOCK : SHA256_CBLOCK;
}

static void digest_init(CCHmacAlgorithm algorithm, union digest_state *state) {
    switch (algorithm) {
    case kCCHmacAlgMD5: MD5_Init(&state->md5); break;
    case kCCHmacAlgSHA1: SHA1_Init(&state->sha1); break;
    case kCCHmacAlgSHA224: SHA224_Init(&state->sha256); break;
    case kCCHmacAlgSHA256: SHA256_Init(&state->sha256); break;
    case kCCHmacAlgSHA384: SHA384_Init(&state->sha512); break;
    case kCCHmacAlgSHA512: SHA512_Init(&state->sha512); break;
    }
}

static void digest_update(CCHmacAlgorithm algorithm, union digest_state *state, const void *data, size_t length) {
    switch (algorithm) {
    case kCCHmacAlgMD5: MD5_Update(&state->md5, data, length); break;
    case kCCHmacAlgSHA1: SHA1_Update(&state->sha1, data, length); break;
    case kCCHmacAlgSHA224: SHA224_Update(&state->sha256, data, length); break;
    case kCCHmacAlgSHA256: SHA256_Update(&state->sha256, data, length); break;
    case kCCHmacAlgSHA384: SHA384_Update(&state->sha512, data, length); break;
    case kCCHmacAlgSHA512: SHA512_Update(&state->sha512, data, length); break;
    }
}

static void digest_final(CCHmacAlgorithm algorithm, union digest_state *state, unsigned char *out) {
    switch (algorithm) {
    case kCCHmacAlgMD5: MD5_Final(out, &state->md5); break;
    case kCCHmacAlgSHA1: SHA1_Final(out, &state->sha1); break;
    case kCCHmacAlgSHA224: SHA224_Final(out, &state->sha256); break;
    case kCCHmacAlgSHA256: SHA256_Final(out, &state->sha256); break;
    case kCCHmacAlgSHA384: SHA384_Final(out, &state->sha512); break;
    case kCCHmacAlgSHA512: SHA512_Final(out, &state->sha512); break;
    }
}

void CCHmacInit(CCHmacContext *ctx, CCHmacAlgorithm algorithm, const void *key, size_t keyLength) {
    struct hmac_state *state = (struct hmac_state *)ctx;
    memset(state, 0, sizeof *state);
    size_t block = block_length(algorithm);
    if (digest_length(algorithm) == 0) return;  // an unknown algorithm: Final writes nothing
    unsigned char padded[SHA512_CBLOCK] = {0};
    if (keyLength > block) {
        union digest_state hashed;
        digest_init(algorithm, &hashed);
        digest_update(algorithm, &hashed, key, keyLength);
        digest_final(algorithm, &hashed, padded);
    } else if (keyLength > 0) {
        memcpy(padded, key, keyLength);
    }
    unsigned char inner_key[SHA512_CBLOCK];
    for (size_t i = 0; i < block; i++) {
        inner_key[i] = padded[i] ^ 0x36;
        state->outer_key[i] = padded[i] ^ 0x5c;
    }
    state->algorithm = algorithm;
    state->valid = 1;
    digest_init(algorithm, &state->inner);
    digest_update(algorithm, &state->inner, inner_key, block);
}

void CCHmacUpdate(CCHmacContext *ctx, const void *data, size_t dataLength) {
    struct hmac_state *state = (struct hmac_state *)ctx;
    if (state->valid) digest_update(state->algorithm, &state->inner, data, dataLength);
}

void CCHmacFinal(CCHmacContext *ctx, void *macOut) {
    struct hmac_state *state = (struct hmac_state *)ctx;
    if (!state->valid) return;
    unsigned char inner_digest[SHA512_DIGEST_LENGTH];
    digest_final(state->algorithm, &state->inner, inner_digest);
    union digest_state outer;
    digest_init(state->algorithm, &outer);
    digest_update(state->algorithm, &outer, state->outer_key, block_length(state->algorithm));
    digest_update(state->algorithm, &outer, inner_digest, digest_length(state->algorithm));
    digest_final(state->algorithm, &outer, macOut);
    state->valid = 0;
}

void CCHmac(CCHmacAlgorithm algorithm, const void *key, size_t keyLength, const void *data, size_t dataLength,
            void *macOut) {
    CCHmacContext context;
    CCHmacInit(&context, algorithm, key, keyLength);
    CCHmacUpdate(&context, data, dataLength);
    CCHmacFinal(&context, macOut);
}
