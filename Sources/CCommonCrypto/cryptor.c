// CCCrypt, PBKDF2 and random bytes on libcrypto, with CommonCrypto's statuses: a key of the wrong size
// (kCCKeySizeError), unaligned input without padding (kCCAlignmentError), an output buffer too small
// (kCCBufferTooSmall, the size needed in dataOutMoved), a bad padding on decryption (kCCDecodeError).
#include "CommonCrypto.h"

#include <errno.h>
#include <openssl/evp.h>
#include <sys/random.h>

// The cipher for an algorithm, key size and mode; NULL with *status set when there is none.
static const EVP_CIPHER *cipher_for(CCAlgorithm alg, size_t keyLength, int ecb, size_t *block,
                                    CCCryptorStatus *status) {
    switch (alg) {
    case kCCAlgorithmAES:
        *block = kCCBlockSizeAES128;
        switch (keyLength) {
        case kCCKeySizeAES128: return ecb ? EVP_aes_128_ecb() : EVP_aes_128_cbc();
        case kCCKeySizeAES192: return ecb ? EVP_aes_192_ecb() : EVP_aes_192_cbc();
        case kCCKeySizeAES256: return ecb ? EVP_aes_256_ecb() : EVP_aes_256_cbc();
        default: *status = kCCKeySizeError; return NULL;
        }
    case kCCAlgorithm3DES:
        *block = kCCBlockSize3DES;
        if (keyLength != kCCKeySize3DES) {
            *status = kCCKeySizeError;
            return NULL;
        }
        return ecb ? EVP_des_ede3_ecb() : EVP_des_ede3_cbc();
    case kCCAlgorithmDES:
    case kCCAlgorithmCAST:
    case kCCAlgorithmRC4:
    case kCCAlgorithmRC2:
    case kCCAlgorithmBlowfish:
        // OpenSSL 3's legacy provider: not loaded.
        *status = kCCUnimplemented;
        return NULL;
    default: *status = kCCParamError; return NULL;
    }
}

CCCryptorStatus CCCrypt(CCOperation op, CCAlgorithm alg, CCOptions options, const void *key, size_t keyLength,
                        const void *iv, const void *dataIn, size_t dataInLength, void *dataOut,
                        size_t dataOutAvailable, size_t *dataOutMoved) {
    if (dataOutMoved) *dataOutMoved = 0;
    if ((op != kCCEncrypt && op != kCCDecrypt) || key == NULL || (dataIn == NULL && dataInLength > 0)) {
        return kCCParamError;
    }
    int padding = (options & kCCOptionPKCS7Padding) != 0;
    int ecb = (options & kCCOptionECBMode) != 0;
    size_t block = 0;
    CCCryptorStatus status = kCCSuccess;
    const EVP_CIPHER *cipher = cipher_for(alg, keyLength, ecb, &block, &status);
    if (cipher == NULL) return status;
    if ((!padding || op == kCCDecrypt) && dataInLength % block != 0) return kCCAlignmentError;
    size_t needed = op == kCCEncrypt && padding ? (dataInLength / block + 1) * block : dataInLength;
    if (dataOut == NULL || dataOutAvailable < needed) {
        if (dataOutMoved) *dataOutMoved = needed;
        return dataOut == NULL && needed > 0 ? kCCParamError : needed > 0 ? kCCBufferTooSmall : kCCSuccess;
    }
    if (dataInLength > INT32_MAX) return kCCOverflow;
    static const unsigned char zeros[16] = {0};
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return kCCMemoryFailure;
    int written = 0, last = 0;
    int ok = EVP_CipherInit_ex(context, cipher, NULL, key, ecb ? NULL : (iv ? iv : zeros), op == kCCEncrypt) &&
             EVP_CIPHER_CTX_set_padding(context, padding) &&
             EVP_CipherUpdate(context, dataOut, &written, dataIn, (int)dataInLength);
    if (ok) ok = EVP_CipherFinal_ex(context, (unsigned char *)dataOut + written, &last);
    EVP_CIPHER_CTX_free(context);
    if (!ok) return op == kCCDecrypt ? kCCDecodeError : kCCUnspecifiedError;
    if (dataOutMoved) *dataOutMoved = (size_t)written + (size_t)last;
    return kCCSuccess;
}

int CCKeyDerivationPBKDF(CCPBKDFAlgorithm algorithm, const char *password, size_t passwordLen, const uint8_t *salt,
                         size_t saltLen, CCPseudoRandomAlgorithm prf, unsigned rounds, uint8_t *derivedKey,
                         size_t derivedKeyLen) {
    const EVP_MD *digest = NULL;
    switch (prf) {
    case kCCPRFHmacAlgSHA1: digest = EVP_sha1(); break;
    case kCCPRFHmacAlgSHA224: digest = EVP_sha224(); break;
    case kCCPRFHmacAlgSHA256: digest = EVP_sha256(); break;
    case kCCPRFHmacAlgSHA384: digest = EVP_sha384(); break;
    case kCCPRFHmacAlgSHA512: digest = EVP_sha512(); break;
    }
    if (algorithm != kCCPBKDF2 || digest == NULL || rounds == 0 || derivedKey == NULL || derivedKeyLen == 0 ||
        (password == NULL && passwordLen > 0) || (salt == NULL && saltLen > 0) || passwordLen > INT32_MAX ||
        saltLen > INT32_MAX || derivedKeyLen > INT32_MAX || rounds > INT32_MAX) {
        return kCCParamError;
    }
    return PKCS5_PBKDF2_HMAC(password ? password : "", (int)passwordLen, salt, (int)saltLen, (int)rounds, digest,
                             (int)derivedKeyLen, derivedKey)
               ? kCCSuccess
               : kCCParamError;
}

CCRNGStatus CCRandomGenerateBytes(void *bytes, size_t count) {
    if (bytes == NULL && count > 0) return kCCParamError;
    size_t filled = 0;
    while (filled < count) {
        ssize_t got = getrandom((unsigned char *)bytes + filled, count - filled, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return kCCRNGFailure;
        }
        filled += (size_t)got;
    }
    return kCCSuccess;
}
