/* MD5 (RFC 1321) for the cleaner's offset-map keys: Kafka's SkimpyOffsetMap stores the 16-byte
 * MD5 of every raw record key (0.9.0.1 / 2.3.0 core/src/main/scala/kafka/log/OffsetMap.scala).
 *
 * md5_digest hashes one buffer; md5_jobs hashes many keys at once, 16 at a time in AVX-512 lanes
 * or 8 in AVX2 lanes when the caller asks for that width and the CPU has it (md5_init reads the
 * CPU features once; nothing else is global). Every path is checked against hashlib in the tests.
 * Include after <stdint.h> and <string.h>, and after _kafka_wire.h (load_le32). */
#ifndef OFFSETS_AUDITOR_MD5_H
#define OFFSETS_AUDITOR_MD5_H

#define MD5_SIZE 16

/* One key to hash: its bytes and where the digest goes. */
typedef struct {
    const unsigned char *key;
    int64_t len;
    unsigned char *out;
} Md5Job;

/* ------------------------------------------------------------------ MD5 (RFC 1321) -- */

#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(f, a, b, c, d, x, t, s)                                                          \
    (a) += f((b), (c), (d)) + (x) + (uint32_t)(t);                                               \
    (a) = ((a) << (s)) | ((a) >> (32 - (s)));                                                    \
    (a) += (b);

static void
md5_block(uint32_t h[4], const unsigned char *blk)
{
    uint32_t x[16];
    for (int i = 0; i < 16; i++) {
        x[i] = load_le32(blk + 4 * i);
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];

    MD5_STEP(MD5_F, a, b, c, d, x[0], 0xd76aa478, 7)
    MD5_STEP(MD5_F, d, a, b, c, x[1], 0xe8c7b756, 12)
    MD5_STEP(MD5_F, c, d, a, b, x[2], 0x242070db, 17)
    MD5_STEP(MD5_F, b, c, d, a, x[3], 0xc1bdceee, 22)
    MD5_STEP(MD5_F, a, b, c, d, x[4], 0xf57c0faf, 7)
    MD5_STEP(MD5_F, d, a, b, c, x[5], 0x4787c62a, 12)
    MD5_STEP(MD5_F, c, d, a, b, x[6], 0xa8304613, 17)
    MD5_STEP(MD5_F, b, c, d, a, x[7], 0xfd469501, 22)
    MD5_STEP(MD5_F, a, b, c, d, x[8], 0x698098d8, 7)
    MD5_STEP(MD5_F, d, a, b, c, x[9], 0x8b44f7af, 12)
    MD5_STEP(MD5_F, c, d, a, b, x[10], 0xffff5bb1, 17)
    MD5_STEP(MD5_F, b, c, d, a, x[11], 0x895cd7be, 22)
    MD5_STEP(MD5_F, a, b, c, d, x[12], 0x6b901122, 7)
    MD5_STEP(MD5_F, d, a, b, c, x[13], 0xfd987193, 12)
    MD5_STEP(MD5_F, c, d, a, b, x[14], 0xa679438e, 17)
    MD5_STEP(MD5_F, b, c, d, a, x[15], 0x49b40821, 22)

    MD5_STEP(MD5_G, a, b, c, d, x[1], 0xf61e2562, 5)
    MD5_STEP(MD5_G, d, a, b, c, x[6], 0xc040b340, 9)
    MD5_STEP(MD5_G, c, d, a, b, x[11], 0x265e5a51, 14)
    MD5_STEP(MD5_G, b, c, d, a, x[0], 0xe9b6c7aa, 20)
    MD5_STEP(MD5_G, a, b, c, d, x[5], 0xd62f105d, 5)
    MD5_STEP(MD5_G, d, a, b, c, x[10], 0x02441453, 9)
    MD5_STEP(MD5_G, c, d, a, b, x[15], 0xd8a1e681, 14)
    MD5_STEP(MD5_G, b, c, d, a, x[4], 0xe7d3fbc8, 20)
    MD5_STEP(MD5_G, a, b, c, d, x[9], 0x21e1cde6, 5)
    MD5_STEP(MD5_G, d, a, b, c, x[14], 0xc33707d6, 9)
    MD5_STEP(MD5_G, c, d, a, b, x[3], 0xf4d50d87, 14)
    MD5_STEP(MD5_G, b, c, d, a, x[8], 0x455a14ed, 20)
    MD5_STEP(MD5_G, a, b, c, d, x[13], 0xa9e3e905, 5)
    MD5_STEP(MD5_G, d, a, b, c, x[2], 0xfcefa3f8, 9)
    MD5_STEP(MD5_G, c, d, a, b, x[7], 0x676f02d9, 14)
    MD5_STEP(MD5_G, b, c, d, a, x[12], 0x8d2a4c8a, 20)

    MD5_STEP(MD5_H, a, b, c, d, x[5], 0xfffa3942, 4)
    MD5_STEP(MD5_H, d, a, b, c, x[8], 0x8771f681, 11)
    MD5_STEP(MD5_H, c, d, a, b, x[11], 0x6d9d6122, 16)
    MD5_STEP(MD5_H, b, c, d, a, x[14], 0xfde5380c, 23)
    MD5_STEP(MD5_H, a, b, c, d, x[1], 0xa4beea44, 4)
    MD5_STEP(MD5_H, d, a, b, c, x[4], 0x4bdecfa9, 11)
    MD5_STEP(MD5_H, c, d, a, b, x[7], 0xf6bb4b60, 16)
    MD5_STEP(MD5_H, b, c, d, a, x[10], 0xbebfbc70, 23)
    MD5_STEP(MD5_H, a, b, c, d, x[13], 0x289b7ec6, 4)
    MD5_STEP(MD5_H, d, a, b, c, x[0], 0xeaa127fa, 11)
    MD5_STEP(MD5_H, c, d, a, b, x[3], 0xd4ef3085, 16)
    MD5_STEP(MD5_H, b, c, d, a, x[6], 0x04881d05, 23)
    MD5_STEP(MD5_H, a, b, c, d, x[9], 0xd9d4d039, 4)
    MD5_STEP(MD5_H, d, a, b, c, x[12], 0xe6db99e5, 11)
    MD5_STEP(MD5_H, c, d, a, b, x[15], 0x1fa27cf8, 16)
    MD5_STEP(MD5_H, b, c, d, a, x[2], 0xc4ac5665, 23)

    MD5_STEP(MD5_I, a, b, c, d, x[0], 0xf4292244, 6)
    MD5_STEP(MD5_I, d, a, b, c, x[7], 0x432aff97, 10)
    MD5_STEP(MD5_I, c, d, a, b, x[14], 0xab9423a7, 15)
    MD5_STEP(MD5_I, b, c, d, a, x[5], 0xfc93a039, 21)
    MD5_STEP(MD5_I, a, b, c, d, x[12], 0x655b59c3, 6)
    MD5_STEP(MD5_I, d, a, b, c, x[3], 0x8f0ccc92, 10)
    MD5_STEP(MD5_I, c, d, a, b, x[10], 0xffeff47d, 15)
    MD5_STEP(MD5_I, b, c, d, a, x[1], 0x85845dd1, 21)
    MD5_STEP(MD5_I, a, b, c, d, x[8], 0x6fa87e4f, 6)
    MD5_STEP(MD5_I, d, a, b, c, x[15], 0xfe2ce6e0, 10)
    MD5_STEP(MD5_I, c, d, a, b, x[6], 0xa3014314, 15)
    MD5_STEP(MD5_I, b, c, d, a, x[13], 0x4e0811a1, 21)
    MD5_STEP(MD5_I, a, b, c, d, x[4], 0xf7537e82, 6)
    MD5_STEP(MD5_I, d, a, b, c, x[11], 0xbd3af235, 10)
    MD5_STEP(MD5_I, c, d, a, b, x[2], 0x2ad7d2bb, 15)
    MD5_STEP(MD5_I, b, c, d, a, x[9], 0xeb86d391, 21)

    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

/* The 16-byte MD5 digest of p[0:n]. */
static void
md5_digest(const unsigned char *p, int64_t n, unsigned char out[MD5_SIZE])
{
    uint32_t h[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
    int64_t full = n / 64;
    for (int64_t i = 0; i < full; i++) {
        md5_block(h, p + 64 * i);
    }
    unsigned char tail[128];
    int64_t rem = n - 64 * full;
    memcpy(tail, p + 64 * full, (size_t)rem);
    tail[rem] = 0x80;
    int64_t tail_len = rem < 56 ? 64 : 128;
    memset(tail + rem + 1, 0, (size_t)(tail_len - rem - 1));
    uint64_t bits = (uint64_t)n * 8u;
    for (int i = 0; i < 8; i++) {
        tail[tail_len - 8 + i] = (unsigned char)(bits >> (8 * i));
    }
    md5_block(h, tail);
    if (tail_len == 128) {
        md5_block(h, tail + 64);
    }
    for (int i = 0; i < 4; i++) {
        out[4 * i] = (unsigned char)h[i];
        out[4 * i + 1] = (unsigned char)(h[i] >> 8);
        out[4 * i + 2] = (unsigned char)(h[i] >> 16);
        out[4 * i + 3] = (unsigned char)(h[i] >> 24);
    }
}

/* ----------------------------------------------- MD5 of many keys at once (SIMD) -- */

/* The same RFC 1321 rounds, 16 keys at a time in AVX-512 lanes (ternary logic computes F, G,
 * H and I in one instruction) or 8 at a time with AVX2; each lane's padded message is gathered
 * word by word. Keys of up to MANY_MAX_KEY bytes (two blocks) go in lanes, longer ones through
 * md5_digest. tests/test_native_reader.py checks every path against hashlib. */
#define MANY_MAX_KEY 119
static int have_avx512 = 0; /* CPU features, read once by md5_init and never changed */
static int have_avx2 = 0;

/* Lane l's padded message into blk + l * 128; returns its block count (1 or 2). */
static inline int
pad_lane(unsigned char *blk, const unsigned char *key, int64_t n)
{
    memset(blk, 0, 128);
    if (n > 0) {
        memcpy(blk, key, (size_t)n);
    }
    blk[n] = 0x80;
    int blocks = n < 56 ? 1 : 2;
    uint64_t bits = (uint64_t)n * 8u;
    for (int i = 0; i < 8; i++) {
        blk[64 * blocks - 8 + i] = (unsigned char)(bits >> (8 * i));
    }
    return blocks;
}

static inline void
lane_digest(unsigned char *out, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        out[4 * i] = (unsigned char)h[i];
        out[4 * i + 1] = (unsigned char)(h[i] >> 8);
        out[4 * i + 2] = (unsigned char)(h[i] >> 16);
        out[4 * i + 3] = (unsigned char)(h[i] >> 24);
    }
}

#ifdef HAVE_SSE42_CRC32C /* x86-64 with GCC or clang */
#define V512_STEP(imm, a, b, c, d, xi, t, s)                                                      \
    a = _mm512_add_epi32(                                                                          \
        a, _mm512_add_epi32(_mm512_ternarylogic_epi32(b, c, d, imm),                               \
                            _mm512_add_epi32(xi, _mm512_set1_epi32((int)(uint32_t)(t)))));        \
    a = _mm512_add_epi32(_mm512_rol_epi32(a, s), b);

__attribute__((target("avx512f"))) static void
md5_x16(const Md5Job *jobs, int lanes)
{
    unsigned char blk[16 * 128] __attribute__((aligned(64)));
    unsigned mask2 = 0;
    for (int l = 0; l < 16; l++) {
        const Md5Job *r = &jobs[l < lanes ? l : 0];
        if (pad_lane(blk + 128 * l, r->key, r->len) == 2) {
            mask2 |= 1u << l;
        }
    }
    const __m512i index = _mm512_set_epi32(15 * 128, 14 * 128, 13 * 128, 12 * 128, 11 * 128,
                                           10 * 128, 9 * 128, 8 * 128, 7 * 128, 6 * 128, 5 * 128,
                                           4 * 128, 3 * 128, 2 * 128, 128, 0);
    __m512i h0 = _mm512_set1_epi32(0x67452301), h1 = _mm512_set1_epi32((int)0xefcdab89u);
    __m512i h2 = _mm512_set1_epi32((int)0x98badcfeu), h3 = _mm512_set1_epi32(0x10325476);
    for (int block = 0; block < (mask2 ? 2 : 1); block++) {
        __m512i x[16];
        for (int i = 0; i < 16; i++) {
            x[i] = _mm512_i32gather_epi32(index, (const void *)(blk + 64 * block + 4 * i), 1);
        }
        __m512i a = h0, b = h1, c = h2, d = h3;
    V512_STEP(0xCA, a, b, c, d, x[0], 0xd76aa478, 7)
    V512_STEP(0xCA, d, a, b, c, x[1], 0xe8c7b756, 12)
    V512_STEP(0xCA, c, d, a, b, x[2], 0x242070db, 17)
    V512_STEP(0xCA, b, c, d, a, x[3], 0xc1bdceee, 22)
    V512_STEP(0xCA, a, b, c, d, x[4], 0xf57c0faf, 7)
    V512_STEP(0xCA, d, a, b, c, x[5], 0x4787c62a, 12)
    V512_STEP(0xCA, c, d, a, b, x[6], 0xa8304613, 17)
    V512_STEP(0xCA, b, c, d, a, x[7], 0xfd469501, 22)
    V512_STEP(0xCA, a, b, c, d, x[8], 0x698098d8, 7)
    V512_STEP(0xCA, d, a, b, c, x[9], 0x8b44f7af, 12)
    V512_STEP(0xCA, c, d, a, b, x[10], 0xffff5bb1, 17)
    V512_STEP(0xCA, b, c, d, a, x[11], 0x895cd7be, 22)
    V512_STEP(0xCA, a, b, c, d, x[12], 0x6b901122, 7)
    V512_STEP(0xCA, d, a, b, c, x[13], 0xfd987193, 12)
    V512_STEP(0xCA, c, d, a, b, x[14], 0xa679438e, 17)
    V512_STEP(0xCA, b, c, d, a, x[15], 0x49b40821, 22)
    V512_STEP(0xE4, a, b, c, d, x[1], 0xf61e2562, 5)
    V512_STEP(0xE4, d, a, b, c, x[6], 0xc040b340, 9)
    V512_STEP(0xE4, c, d, a, b, x[11], 0x265e5a51, 14)
    V512_STEP(0xE4, b, c, d, a, x[0], 0xe9b6c7aa, 20)
    V512_STEP(0xE4, a, b, c, d, x[5], 0xd62f105d, 5)
    V512_STEP(0xE4, d, a, b, c, x[10], 0x02441453, 9)
    V512_STEP(0xE4, c, d, a, b, x[15], 0xd8a1e681, 14)
    V512_STEP(0xE4, b, c, d, a, x[4], 0xe7d3fbc8, 20)
    V512_STEP(0xE4, a, b, c, d, x[9], 0x21e1cde6, 5)
    V512_STEP(0xE4, d, a, b, c, x[14], 0xc33707d6, 9)
    V512_STEP(0xE4, c, d, a, b, x[3], 0xf4d50d87, 14)
    V512_STEP(0xE4, b, c, d, a, x[8], 0x455a14ed, 20)
    V512_STEP(0xE4, a, b, c, d, x[13], 0xa9e3e905, 5)
    V512_STEP(0xE4, d, a, b, c, x[2], 0xfcefa3f8, 9)
    V512_STEP(0xE4, c, d, a, b, x[7], 0x676f02d9, 14)
    V512_STEP(0xE4, b, c, d, a, x[12], 0x8d2a4c8a, 20)
    V512_STEP(0x96, a, b, c, d, x[5], 0xfffa3942, 4)
    V512_STEP(0x96, d, a, b, c, x[8], 0x8771f681, 11)
    V512_STEP(0x96, c, d, a, b, x[11], 0x6d9d6122, 16)
    V512_STEP(0x96, b, c, d, a, x[14], 0xfde5380c, 23)
    V512_STEP(0x96, a, b, c, d, x[1], 0xa4beea44, 4)
    V512_STEP(0x96, d, a, b, c, x[4], 0x4bdecfa9, 11)
    V512_STEP(0x96, c, d, a, b, x[7], 0xf6bb4b60, 16)
    V512_STEP(0x96, b, c, d, a, x[10], 0xbebfbc70, 23)
    V512_STEP(0x96, a, b, c, d, x[13], 0x289b7ec6, 4)
    V512_STEP(0x96, d, a, b, c, x[0], 0xeaa127fa, 11)
    V512_STEP(0x96, c, d, a, b, x[3], 0xd4ef3085, 16)
    V512_STEP(0x96, b, c, d, a, x[6], 0x04881d05, 23)
    V512_STEP(0x96, a, b, c, d, x[9], 0xd9d4d039, 4)
    V512_STEP(0x96, d, a, b, c, x[12], 0xe6db99e5, 11)
    V512_STEP(0x96, c, d, a, b, x[15], 0x1fa27cf8, 16)
    V512_STEP(0x96, b, c, d, a, x[2], 0xc4ac5665, 23)
    V512_STEP(0x39, a, b, c, d, x[0], 0xf4292244, 6)
    V512_STEP(0x39, d, a, b, c, x[7], 0x432aff97, 10)
    V512_STEP(0x39, c, d, a, b, x[14], 0xab9423a7, 15)
    V512_STEP(0x39, b, c, d, a, x[5], 0xfc93a039, 21)
    V512_STEP(0x39, a, b, c, d, x[12], 0x655b59c3, 6)
    V512_STEP(0x39, d, a, b, c, x[3], 0x8f0ccc92, 10)
    V512_STEP(0x39, c, d, a, b, x[10], 0xffeff47d, 15)
    V512_STEP(0x39, b, c, d, a, x[1], 0x85845dd1, 21)
    V512_STEP(0x39, a, b, c, d, x[8], 0x6fa87e4f, 6)
    V512_STEP(0x39, d, a, b, c, x[15], 0xfe2ce6e0, 10)
    V512_STEP(0x39, c, d, a, b, x[6], 0xa3014314, 15)
    V512_STEP(0x39, b, c, d, a, x[13], 0x4e0811a1, 21)
    V512_STEP(0x39, a, b, c, d, x[4], 0xf7537e82, 6)
    V512_STEP(0x39, d, a, b, c, x[11], 0xbd3af235, 10)
    V512_STEP(0x39, c, d, a, b, x[2], 0x2ad7d2bb, 15)
    V512_STEP(0x39, b, c, d, a, x[9], 0xeb86d391, 21)
        a = _mm512_add_epi32(a, h0);
        b = _mm512_add_epi32(b, h1);
        c = _mm512_add_epi32(c, h2);
        d = _mm512_add_epi32(d, h3);
        if (block == 0) {
            h0 = a;
            h1 = b;
            h2 = c;
            h3 = d;
        }
        else {
            h0 = _mm512_mask_blend_epi32((__mmask16)mask2, h0, a);
            h1 = _mm512_mask_blend_epi32((__mmask16)mask2, h1, b);
            h2 = _mm512_mask_blend_epi32((__mmask16)mask2, h2, c);
            h3 = _mm512_mask_blend_epi32((__mmask16)mask2, h3, d);
        }
    }
    uint32_t A[16], B[16], C[16], D[16];
    _mm512_storeu_si512((void *)A, h0);
    _mm512_storeu_si512((void *)B, h1);
    _mm512_storeu_si512((void *)C, h2);
    _mm512_storeu_si512((void *)D, h3);
    for (int l = 0; l < lanes; l++) {
        lane_digest(jobs[l].out, A[l], B[l], C[l], D[l]);
    }
}

#define V256_F(x, y, z) _mm256_or_si256(_mm256_and_si256(x, y), _mm256_andnot_si256(x, z))
#define V256_G(x, y, z) _mm256_or_si256(_mm256_and_si256(x, z), _mm256_andnot_si256(z, y))
#define V256_H(x, y, z) _mm256_xor_si256(_mm256_xor_si256(x, y), z)
#define V256_I(x, y, z) _mm256_xor_si256(y, _mm256_or_si256(x, _mm256_xor_si256(z, ones)))
#define V256_STEP(f, a, b, c, d, xi, t, s)                                                        \
    a = _mm256_add_epi32(                                                                          \
        a, _mm256_add_epi32(f(b, c, d),                                                            \
                            _mm256_add_epi32(xi, _mm256_set1_epi32((int)(uint32_t)(t)))));        \
    a = _mm256_add_epi32(_mm256_or_si256(_mm256_slli_epi32(a, s), _mm256_srli_epi32(a, 32 - s)), \
                         b);

__attribute__((target("avx2"))) static void
md5_x8(const Md5Job *jobs, int lanes)
{
    unsigned char blk[8 * 128] __attribute__((aligned(32)));
    int mask2 = 0;
    for (int l = 0; l < 8; l++) {
        const Md5Job *r = &jobs[l < lanes ? l : 0];
        if (pad_lane(blk + 128 * l, r->key, r->len) == 2) {
            mask2 |= 1 << l;
        }
    }
    const __m256i ones = _mm256_set1_epi32(-1);
    const __m256i index = _mm256_set_epi32(7 * 128, 6 * 128, 5 * 128, 4 * 128, 3 * 128, 2 * 128,
                                           128, 0);
    const __m256i two = _mm256_set_epi32(
        (mask2 >> 7) & 1 ? -1 : 0, (mask2 >> 6) & 1 ? -1 : 0, (mask2 >> 5) & 1 ? -1 : 0,
        (mask2 >> 4) & 1 ? -1 : 0, (mask2 >> 3) & 1 ? -1 : 0, (mask2 >> 2) & 1 ? -1 : 0,
        (mask2 >> 1) & 1 ? -1 : 0, mask2 & 1 ? -1 : 0);
    __m256i h0 = _mm256_set1_epi32(0x67452301), h1 = _mm256_set1_epi32((int)0xefcdab89u);
    __m256i h2 = _mm256_set1_epi32((int)0x98badcfeu), h3 = _mm256_set1_epi32(0x10325476);
    for (int block = 0; block < (mask2 ? 2 : 1); block++) {
        __m256i x[16];
        for (int i = 0; i < 16; i++) {
            x[i] = _mm256_i32gather_epi32((const int *)(blk + 64 * block + 4 * i), index, 1);
        }
        __m256i a = h0, b = h1, c = h2, d = h3;
    V256_STEP(V256_F, a, b, c, d, x[0], 0xd76aa478, 7)
    V256_STEP(V256_F, d, a, b, c, x[1], 0xe8c7b756, 12)
    V256_STEP(V256_F, c, d, a, b, x[2], 0x242070db, 17)
    V256_STEP(V256_F, b, c, d, a, x[3], 0xc1bdceee, 22)
    V256_STEP(V256_F, a, b, c, d, x[4], 0xf57c0faf, 7)
    V256_STEP(V256_F, d, a, b, c, x[5], 0x4787c62a, 12)
    V256_STEP(V256_F, c, d, a, b, x[6], 0xa8304613, 17)
    V256_STEP(V256_F, b, c, d, a, x[7], 0xfd469501, 22)
    V256_STEP(V256_F, a, b, c, d, x[8], 0x698098d8, 7)
    V256_STEP(V256_F, d, a, b, c, x[9], 0x8b44f7af, 12)
    V256_STEP(V256_F, c, d, a, b, x[10], 0xffff5bb1, 17)
    V256_STEP(V256_F, b, c, d, a, x[11], 0x895cd7be, 22)
    V256_STEP(V256_F, a, b, c, d, x[12], 0x6b901122, 7)
    V256_STEP(V256_F, d, a, b, c, x[13], 0xfd987193, 12)
    V256_STEP(V256_F, c, d, a, b, x[14], 0xa679438e, 17)
    V256_STEP(V256_F, b, c, d, a, x[15], 0x49b40821, 22)
    V256_STEP(V256_G, a, b, c, d, x[1], 0xf61e2562, 5)
    V256_STEP(V256_G, d, a, b, c, x[6], 0xc040b340, 9)
    V256_STEP(V256_G, c, d, a, b, x[11], 0x265e5a51, 14)
    V256_STEP(V256_G, b, c, d, a, x[0], 0xe9b6c7aa, 20)
    V256_STEP(V256_G, a, b, c, d, x[5], 0xd62f105d, 5)
    V256_STEP(V256_G, d, a, b, c, x[10], 0x02441453, 9)
    V256_STEP(V256_G, c, d, a, b, x[15], 0xd8a1e681, 14)
    V256_STEP(V256_G, b, c, d, a, x[4], 0xe7d3fbc8, 20)
    V256_STEP(V256_G, a, b, c, d, x[9], 0x21e1cde6, 5)
    V256_STEP(V256_G, d, a, b, c, x[14], 0xc33707d6, 9)
    V256_STEP(V256_G, c, d, a, b, x[3], 0xf4d50d87, 14)
    V256_STEP(V256_G, b, c, d, a, x[8], 0x455a14ed, 20)
    V256_STEP(V256_G, a, b, c, d, x[13], 0xa9e3e905, 5)
    V256_STEP(V256_G, d, a, b, c, x[2], 0xfcefa3f8, 9)
    V256_STEP(V256_G, c, d, a, b, x[7], 0x676f02d9, 14)
    V256_STEP(V256_G, b, c, d, a, x[12], 0x8d2a4c8a, 20)
    V256_STEP(V256_H, a, b, c, d, x[5], 0xfffa3942, 4)
    V256_STEP(V256_H, d, a, b, c, x[8], 0x8771f681, 11)
    V256_STEP(V256_H, c, d, a, b, x[11], 0x6d9d6122, 16)
    V256_STEP(V256_H, b, c, d, a, x[14], 0xfde5380c, 23)
    V256_STEP(V256_H, a, b, c, d, x[1], 0xa4beea44, 4)
    V256_STEP(V256_H, d, a, b, c, x[4], 0x4bdecfa9, 11)
    V256_STEP(V256_H, c, d, a, b, x[7], 0xf6bb4b60, 16)
    V256_STEP(V256_H, b, c, d, a, x[10], 0xbebfbc70, 23)
    V256_STEP(V256_H, a, b, c, d, x[13], 0x289b7ec6, 4)
    V256_STEP(V256_H, d, a, b, c, x[0], 0xeaa127fa, 11)
    V256_STEP(V256_H, c, d, a, b, x[3], 0xd4ef3085, 16)
    V256_STEP(V256_H, b, c, d, a, x[6], 0x04881d05, 23)
    V256_STEP(V256_H, a, b, c, d, x[9], 0xd9d4d039, 4)
    V256_STEP(V256_H, d, a, b, c, x[12], 0xe6db99e5, 11)
    V256_STEP(V256_H, c, d, a, b, x[15], 0x1fa27cf8, 16)
    V256_STEP(V256_H, b, c, d, a, x[2], 0xc4ac5665, 23)
    V256_STEP(V256_I, a, b, c, d, x[0], 0xf4292244, 6)
    V256_STEP(V256_I, d, a, b, c, x[7], 0x432aff97, 10)
    V256_STEP(V256_I, c, d, a, b, x[14], 0xab9423a7, 15)
    V256_STEP(V256_I, b, c, d, a, x[5], 0xfc93a039, 21)
    V256_STEP(V256_I, a, b, c, d, x[12], 0x655b59c3, 6)
    V256_STEP(V256_I, d, a, b, c, x[3], 0x8f0ccc92, 10)
    V256_STEP(V256_I, c, d, a, b, x[10], 0xffeff47d, 15)
    V256_STEP(V256_I, b, c, d, a, x[1], 0x85845dd1, 21)
    V256_STEP(V256_I, a, b, c, d, x[8], 0x6fa87e4f, 6)
    V256_STEP(V256_I, d, a, b, c, x[15], 0xfe2ce6e0, 10)
    V256_STEP(V256_I, c, d, a, b, x[6], 0xa3014314, 15)
    V256_STEP(V256_I, b, c, d, a, x[13], 0x4e0811a1, 21)
    V256_STEP(V256_I, a, b, c, d, x[4], 0xf7537e82, 6)
    V256_STEP(V256_I, d, a, b, c, x[11], 0xbd3af235, 10)
    V256_STEP(V256_I, c, d, a, b, x[2], 0x2ad7d2bb, 15)
    V256_STEP(V256_I, b, c, d, a, x[9], 0xeb86d391, 21)
        a = _mm256_add_epi32(a, h0);
        b = _mm256_add_epi32(b, h1);
        c = _mm256_add_epi32(c, h2);
        d = _mm256_add_epi32(d, h3);
        if (block == 0) {
            h0 = a;
            h1 = b;
            h2 = c;
            h3 = d;
        }
        else {
            h0 = _mm256_blendv_epi8(h0, a, two);
            h1 = _mm256_blendv_epi8(h1, b, two);
            h2 = _mm256_blendv_epi8(h2, c, two);
            h3 = _mm256_blendv_epi8(h3, d, two);
        }
    }
    uint32_t A[8], B[8], C[8], D[8];
    _mm256_storeu_si256((__m256i *)A, h0);
    _mm256_storeu_si256((__m256i *)B, h1);
    _mm256_storeu_si256((__m256i *)C, h2);
    _mm256_storeu_si256((__m256i *)D, h3);
    for (int l = 0; l < lanes; l++) {
        lane_digest(jobs[l].out, A[l], B[l], C[l], D[l]);
    }
}
#endif


/* The widest lane count the CPU supports: 16, 8 or 1. */
static int
md5_max_width(void)
{
    return have_avx512 ? 16 : (have_avx2 ? 8 : 1);
}

/* Hash every job, `width` keys at a time (16, 8 or 1; clamped to what the CPU has). */
static void
md5_jobs(const Md5Job *jobs, int64_t n, int width)
{
    if (width > md5_max_width()) {
        width = md5_max_width();
    }
    int64_t i = 0;
#ifdef HAVE_SSE42_CRC32C
    if (width > 1) {
        Md5Job lanes[16];
        int used = 0;
        for (; i < n; i++) {
            if (jobs[i].len > MANY_MAX_KEY) {
                md5_digest(jobs[i].key, jobs[i].len, jobs[i].out);
                continue;
            }
            lanes[used++] = jobs[i];
            if (used == width) {
                if (width == 16) {
                    md5_x16(lanes, used);
                }
                else {
                    md5_x8(lanes, used);
                }
                used = 0;
            }
        }
        if (used >= 3) {
            if (width == 16) {
                md5_x16(lanes, used);
            }
            else {
                md5_x8(lanes, used);
            }
        }
        else {
            for (int l = 0; l < used; l++) {
                md5_digest(lanes[l].key, lanes[l].len, lanes[l].out);
            }
        }
        return;
    }
#endif
    for (; i < n; i++) {
        md5_digest(jobs[i].key, jobs[i].len, jobs[i].out);
    }
}

/* Read the CPU features once (module init). */
static void
md5_init(void)
{
#ifdef HAVE_SSE42_CRC32C
    __builtin_cpu_init();
    have_avx512 = __builtin_cpu_supports("avx512f");
    have_avx2 = __builtin_cpu_supports("avx2");
#endif
}

#endif /* OFFSETS_AUDITOR_MD5_H */
