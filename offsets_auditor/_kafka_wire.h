/* Primitives of Kafka's wire formats shared by the two C extensions: big-endian reads, the
 * zig-zag varints of v2 records, CRC-32 (zlib, java.util.zip.CRC32: legacy messages v0/v1) and
 * CRC-32C (Castagnoli: v2 record batches). Slice-by-8 tables everywhere; on x86-64 the
 * SSE 4.2 crc32 instruction for CRC-32C and PCLMULQDQ folding for CRC-32 when the CPU has them
 * (detected once by kafka_crc_init). Results equal zlib.crc32 and crc32c.crc32c: the tests
 * compare them at every width. Include after <Python.h>, <stdint.h> and <string.h>. */
#ifndef OFFSETS_AUDITOR_KAFKA_WIRE_H
#define OFFSETS_AUDITOR_KAFKA_WIRE_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#ifndef HAVE_SSE42_CRC32C
#define HAVE_SSE42_CRC32C 1
#endif
#include <immintrin.h>
#include <nmmintrin.h>
#endif


#define POLY_CRC32 0xEDB88320u
#define POLY_CRC32C 0x82F63B78u

static uint32_t crc32_table[8][256];
static uint32_t crc32c_table[8][256];
#ifdef HAVE_SSE42_CRC32C
static int have_sse42 = 0;
#endif

static void
make_tables(uint32_t table[8][256], uint32_t poly)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        }
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int k = 1; k < 8; k++) {
            c = table[0][c & 0xFF] ^ (c >> 8);
            table[k][n] = c;
        }
    }
}

static inline uint32_t
load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* The CRC register after p[0:n] from register `crc` (no initial or final inversion). */
static uint32_t
crc_update(uint32_t table[8][256], uint32_t crc, const unsigned char *p, int64_t n)
{
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint32_t one = load_le32(p) ^ crc;
        uint32_t two = load_le32(p + 4);
        crc = table[7][one & 0xFF] ^ table[6][(one >> 8) & 0xFF] ^ table[5][(one >> 16) & 0xFF]
              ^ table[4][one >> 24] ^ table[3][two & 0xFF] ^ table[2][(two >> 8) & 0xFF]
              ^ table[1][(two >> 16) & 0xFF] ^ table[0][two >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    }
    return crc;
}

/* The finished CRC (initial value and final xor 0xFFFFFFFF) of p[0:n]. */
static uint32_t
crc_slice8(uint32_t table[8][256], const unsigned char *p, int64_t n)
{
    return crc_update(table, 0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

#ifdef HAVE_SSE42_CRC32C
__attribute__((target("sse4.2"))) static uint32_t
crc32c_sse42(const unsigned char *p, int64_t n)
{
    uint64_t crc = 0xFFFFFFFFu;
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        crc = _mm_crc32_u8((uint32_t)crc, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = _mm_crc32_u64(crc, word);
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        crc = _mm_crc32_u8((uint32_t)crc, *p++);
    }
    return (uint32_t)crc ^ 0xFFFFFFFFu;
}
#endif

#ifdef HAVE_SSE42_CRC32C
static int have_pclmul = 0;

/* The CRC-32 (zlib) register after p[0:n], n >= 64 and a multiple of 16, by carry-less
 * multiplication folding (Intel, "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ",
 * bit-reflected constants for 0xEDB88320, as in zlib-ng and Chromium's crc32_simd.c). */
__attribute__((target("sse4.1,pclmul"))) static uint32_t
crc32_pclmul(const unsigned char *buf, int64_t len, uint32_t crc)
{
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;

    x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = k1k2;
    buf += 64;
    len -= 64;
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        y5 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
        y6 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
        y7 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
        y8 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
        buf += 64;
        len -= 64;
    }
    x0 = k3k4;
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16;
        len -= 16;
    }
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = k5k0;
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    x0 = poly;
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

/* The CRC-32 (zlib, java.util.zip.CRC32) of p[0:n]. */
static uint32_t
crc32_zlib(const unsigned char *p, int64_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
#ifdef HAVE_SSE42_CRC32C
    if (have_pclmul && n >= 64) {
        int64_t chunk = n & ~(int64_t)15;
        crc = crc32_pclmul(p, chunk, crc);
        p += chunk;
        n -= chunk;
    }
#endif
    return crc_update(crc32_table, crc, p, n) ^ 0xFFFFFFFFu;
}

static uint32_t
crc32_castagnoli(const unsigned char *p, int64_t n)
{
#ifdef HAVE_SSE42_CRC32C
    if (have_sse42) {
        return crc32c_sse42(p, n);
    }
#endif
    return crc_slice8(crc32c_table, p, n);
}


/* ------------------------------------------------------------- big-endian reads -- */

static inline int16_t
be16(const unsigned char *p)
{
    return (int16_t)(uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

static inline uint32_t
be32u(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline int32_t
be32(const unsigned char *p)
{
    return (int32_t)be32u(p);
}

static inline int64_t
be64(const unsigned char *p)
{
    return (int64_t)(((uint64_t)be32u(p) << 32) | be32u(p + 4));
}

/* Zig-zag varint of at most `max_bytes` bytes in p[*at:end], masked to the Java width as
 * records/varint.py does; 0 if it runs past `end` or is too long. */
static inline int
read_varint(const unsigned char *p, int64_t *at, int64_t end, int max_bytes, int64_t *out)
{
    uint64_t raw = 0;
    int64_t pos = *at;
    for (int i = 0; i < max_bytes; i++) {
        if (pos >= end) {
            return 0;
        }
        unsigned byte = p[pos++];
        raw |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (byte < 0x80) {
            if (max_bytes == 5) {
                raw &= 0xFFFFFFFFu;
            }
            *out = (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
            *at = pos;
            return 1;
        }
    }
    return 0;
}

/* Build the tables and detect the CPU features; call once from the module init. */
static void
kafka_crc_init(void)
{
    make_tables(crc32_table, POLY_CRC32);
    make_tables(crc32c_table, POLY_CRC32C);
#ifdef HAVE_SSE42_CRC32C
    __builtin_cpu_init();
    have_sse42 = __builtin_cpu_supports("sse4.2");
    have_pclmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

#endif /* OFFSETS_AUDITOR_KAFKA_WIRE_H */
