#ifndef NSE_COMMON_CRYPTO_H
#define NSE_COMMON_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

// Apple's CommonCrypto as extensions call it (`import CommonCrypto`, SDK/CommonCrypto): digests, HMAC, CCCrypt,
// PBKDF2 and random bytes, with Apple's C declarations, so that Swift imports them as on iOS (`CC_SHA256(ptr,
// CC_LONG(count), &digest)`, `CCHmacAlgorithm(kCCHmacAlgSHA256)`, `CCCryptorStatus(kCCSuccess)`). The
// implementation is OpenSSL's libcrypto (Debian's libssl-dev), in this target's .c files, linked into libNSESDK.a.
// Not here, and so a compile error: the CCCryptor object API (CCCryptorCreate…, modes such as CTR and GCM), MD2
// and MD4, CCCalibratePBKDF, and the algorithms OpenSSL 3 keeps in its legacy provider (DES, CAST, RC2, RC4,
// Blowfish), which CCCrypt answers kCCUnimplemented.

// MARK: - CommonDigest

typedef uint32_t CC_LONG;
typedef uint64_t CC_LONG64;

#define CC_MD5_DIGEST_LENGTH 16
#define CC_MD5_BLOCK_BYTES 64
#define CC_MD5_BLOCK_LONG (CC_MD5_BLOCK_BYTES / sizeof(CC_LONG))
#define CC_SHA1_DIGEST_LENGTH 20
#define CC_SHA1_BLOCK_BYTES 64
#define CC_SHA1_BLOCK_LONG (CC_SHA1_BLOCK_BYTES / sizeof(CC_LONG))
#define CC_SHA224_DIGEST_LENGTH 28
#define CC_SHA224_BLOCK_BYTES 64
#define CC_SHA256_DIGEST_LENGTH 32
#define CC_SHA256_BLOCK_BYTES 64
#define CC_SHA384_DIGEST_LENGTH 48
#define CC_SHA384_BLOCK_BYTES 128
#define CC_SHA512_DIGEST_LENGTH 64
#define CC_SHA512_BLOCK_BYTES 128

// Apple's fields; the sizes leave room for libcrypto's own state, which the functions keep in them.
typedef struct CC_MD5state_st {
    CC_LONG A, B, C, D;
    CC_LONG Nl, Nh;
    CC_LONG data[CC_MD5_BLOCK_BYTES / sizeof(CC_LONG)];
    int num;
} CC_MD5_CTX;

typedef struct CC_SHA1state_st {
    CC_LONG h0, h1, h2, h3, h4;
    CC_LONG Nl, Nh;
    CC_LONG data[CC_SHA1_BLOCK_BYTES / sizeof(CC_LONG)];
    int num;
} CC_SHA1_CTX;

typedef struct CC_SHA256state_st {
    CC_LONG count[2];
    CC_LONG hash[8];
    CC_LONG wbuf[16];
    CC_LONG reserved[4];
} CC_SHA256_CTX;

typedef CC_SHA256_CTX CC_SHA224_CTX;

typedef struct CC_SHA512state_st {
    CC_LONG64 count[2];
    CC_LONG64 hash[8];
    CC_LONG64 wbuf[16];
    CC_LONG64 reserved[2];
} CC_SHA512_CTX;

typedef CC_SHA512_CTX CC_SHA384_CTX;

int CC_MD5_Init(CC_MD5_CTX *c);
int CC_MD5_Update(CC_MD5_CTX *c, const void *data, CC_LONG len);
int CC_MD5_Final(unsigned char *md, CC_MD5_CTX *c);
unsigned char *CC_MD5(const void *data, CC_LONG len, unsigned char *md);

int CC_SHA1_Init(CC_SHA1_CTX *c);
int CC_SHA1_Update(CC_SHA1_CTX *c, const void *data, CC_LONG len);
int CC_SHA1_Final(unsigned char *md, CC_SHA1_CTX *c);
unsigned char *CC_SHA1(const void *data, CC_LONG len, unsigned char *md);

int CC_SHA224_Init(CC_SHA256_CTX *c);
int CC_SHA224_Update(CC_SHA256_CTX *c, const void *data, CC_LONG len);
int CC_SHA224_Final(unsigned char *md, CC_SHA256_CTX *c);
unsigned char *CC_SHA224(const void *data, CC_LONG len, unsigned char *md);

int CC_SHA256_Init(CC_SHA256_CTX *c);
int CC_SHA256_Update(CC_SHA256_CTX *c, const void *data, CC_LONG len);
int CC_SHA256_Final(unsigned char *md, CC_SHA256_CTX *c);
unsigned char *CC_SHA256(const void *data, CC_LONG len, unsigned char *md);

int CC_SHA384_Init(CC_SHA512_CTX *c);
int CC_SHA384_Update(CC_SHA512_CTX *c, const void *data, CC_LONG len);
int CC_SHA384_Final(unsigned char *md, CC_SHA512_CTX *c);
unsigned char *CC_SHA384(const void *data, CC_LONG len, unsigned char *md);

int CC_SHA512_Init(CC_SHA512_CTX *c);
int CC_SHA512_Update(CC_SHA512_CTX *c, const void *data, CC_LONG len);
int CC_SHA512_Final(unsigned char *md, CC_SHA512_CTX *c);
unsigned char *CC_SHA512(const void *data, CC_LONG len, unsigned char *md);

// MARK: - CommonHMAC

enum {
    kCCHmacAlgSHA1,
    kCCHmacAlgMD5,
    kCCHmacAlgSHA256,
    kCCHmacAlgSHA384,
    kCCHmacAlgSHA512,
    kCCHmacAlgSHA224
};
typedef uint32_t CCHmacAlgorithm;

#define CC_HMAC_CONTEXT_SIZE 96
typedef struct {
    uint32_t ctx[CC_HMAC_CONTEXT_SIZE];
} CCHmacContext;

void CCHmacInit(CCHmacContext *ctx, CCHmacAlgorithm algorithm, const void *key, size_t keyLength);
void CCHmacUpdate(CCHmacContext *ctx, const void *data, size_t dataLength);
void CCHmacFinal(CCHmacContext *ctx, void *macOut);
void CCHmac(CCHmacAlgorithm algorithm, const void *key, size_t keyLength, const void *data, size_t dataLength,
            void *macOut);

// MARK: - CommonCryptor

enum {
    kCCSuccess = 0,
    kCCParamError = -4300,
    kCCBufferTooSmall = -4301,
    kCCMemoryFailure = -4302,
    kCCAlignmentError = -4303,
    kCCDecodeError = -4304,
    kCCUnimplemented = -4305,
    kCCOverflow = -4306,
    kCCRNGFailure = -4307,
    kCCUnspecifiedError = -4308,
    kCCCallSequenceError = -4309,
    kCCKeySizeError = -4310,
    kCCInvalidKey = -4311,
};
typedef int32_t CCStatus;
typedef int32_t CCCryptorStatus;

enum {
    kCCEncrypt = 0,
    kCCDecrypt,
};
typedef uint32_t CCOperation;

enum {
    kCCAlgorithmAES128 = 0,
    kCCAlgorithmAES = 0,
    kCCAlgorithmDES,
    kCCAlgorithm3DES,
    kCCAlgorithmCAST,
    kCCAlgorithmRC4,
    kCCAlgorithmRC2,
    kCCAlgorithmBlowfish
};
typedef uint32_t CCAlgorithm;

enum {
    kCCOptionPKCS7Padding = 0x0001,
    kCCOptionECBMode = 0x0002
};
typedef uint32_t CCOptions;

enum {
    kCCKeySizeAES128 = 16,
    kCCKeySizeAES192 = 24,
    kCCKeySizeAES256 = 32,
    kCCKeySizeDES = 8,
    kCCKeySize3DES = 24,
    kCCKeySizeMinCAST = 5,
    kCCKeySizeMaxCAST = 16,
    kCCKeySizeMinRC4 = 1,
    kCCKeySizeMaxRC4 = 512,
    kCCKeySizeMinRC2 = 1,
    kCCKeySizeMaxRC2 = 128,
    kCCKeySizeMinBlowfish = 8,
    kCCKeySizeMaxBlowfish = 56,
};

enum {
    kCCBlockSizeAES128 = 16,
    kCCBlockSizeDES = 8,
    kCCBlockSize3DES = 8,
    kCCBlockSizeCAST = 8,
    kCCBlockSizeRC2 = 8,
    kCCBlockSizeBlowfish = 8,
};

CCCryptorStatus CCCrypt(CCOperation op, CCAlgorithm alg, CCOptions options, const void *key, size_t keyLength,
                        const void *iv, const void *dataIn, size_t dataInLength, void *dataOut,
                        size_t dataOutAvailable, size_t *dataOutMoved);

// MARK: - CommonKeyDerivation

enum {
    kCCPBKDF2 = 2,
};
typedef uint32_t CCPBKDFAlgorithm;

enum {
    kCCPRFHmacAlgSHA1 = 1,
    kCCPRFHmacAlgSHA224 = 2,
    kCCPRFHmacAlgSHA256 = 3,
    kCCPRFHmacAlgSHA384 = 4,
    kCCPRFHmacAlgSHA512 = 5,
};
typedef uint32_t CCPseudoRandomAlgorithm;

int CCKeyDerivationPBKDF(CCPBKDFAlgorithm algorithm, const char *password, size_t passwordLen, const uint8_t *salt,
                         size_t saltLen, CCPseudoRandomAlgorithm prf, unsigned rounds, uint8_t *derivedKey,
                         size_t derivedKeyLen);

// MARK: - CommonRandom

typedef CCCryptorStatus CCRNGStatus;

CCRNGStatus CCRandomGenerateBytes(void *bytes, size_t count);

#endif
