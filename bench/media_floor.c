/* The floor for an attachment (docs/media.md): what the extension does to a photo, in C with nothing else. Reads
 * the encrypted file (argv[1]) in 64 KiB + 17-byte chunks, hashes every byte with SHA-256, decrypts each chunk with
 * crypto_secretstream_xchacha20poly1305 under the key (argv[2], base64) and writes the plaintext to argv[3]; exits
 * 0 only if the stream ends on its final chunk and the hash is argv[4] (hex). One chunk in memory at a time. */
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 65536

static int read_full(int fd, unsigned char *buffer, size_t wanted) {
    size_t have = 0;
    while (have < wanted) {
        ssize_t got = read(fd, buffer + have, wanted - have);
        if (got < 0) return -1;
        if (got == 0) break;
        have += (size_t)got;
    }
    return (int)have;
}

int main(int argc, char **argv) {
    if (argc != 5 || sodium_init() < 0) return 64;
    unsigned char key[crypto_secretstream_xchacha20poly1305_KEYBYTES];
    size_t key_length = 0;
    if (sodium_base642bin(key, sizeof key, argv[2], strlen(argv[2]), NULL, &key_length, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0 || key_length != sizeof key) return 65;
    int in = open(argv[1], O_RDONLY), out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0) return 66;
    crypto_hash_sha256_state hash;
    crypto_hash_sha256_init(&hash);
    unsigned char header[crypto_secretstream_xchacha20poly1305_HEADERBYTES];
    if (read_full(in, header, sizeof header) != (int)sizeof header) return 65;
    crypto_hash_sha256_update(&hash, header, sizeof header);
    crypto_secretstream_xchacha20poly1305_state state;
    if (crypto_secretstream_xchacha20poly1305_init_pull(&state, header, key) != 0) return 65;
    static unsigned char cipher[CHUNK + crypto_secretstream_xchacha20poly1305_ABYTES], plain[CHUNK];
    unsigned char tag = 0;
    while (tag != crypto_secretstream_xchacha20poly1305_TAG_FINAL) {
        int got = read_full(in, cipher, sizeof cipher);
        if (got <= 0) return 65;
        crypto_hash_sha256_update(&hash, cipher, (unsigned long long)got);
        unsigned long long length = 0;
        if (crypto_secretstream_xchacha20poly1305_pull(&state, plain, &length, &tag, cipher, (unsigned long long)got,
                                                        NULL, 0) != 0) return 65;
        if (write(out, plain, length) != (ssize_t)length) return 74;
    }
    unsigned char digest[crypto_hash_sha256_BYTES];
    char hex[crypto_hash_sha256_BYTES * 2 + 1];
    crypto_hash_sha256_final(&hash, digest);
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    close(out);
    return strcmp(hex, argv[4]) == 0 ? 0 : 65;
}
