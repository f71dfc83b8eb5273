/*
 * offsets_auditor._cleaner_speedups: the C path of the log-cleaner emulation (optional).
 *
 * What it holds:
 *
 *   - md5(data): RFC 1321, for the offset map's key digests (checked against hashlib in tests).
 *   - SkimpyOffsetMap(slots): Kafka's offset map, byte for byte (0.9.0.1 / 2.3.0
 *     core/src/main/scala/kafka/log/OffsetMap.scala; 3.8 storage/.../SkimpyOffsetMap.java): one
 *     buffer of slots * 24 bytes, each slot the 16-byte MD5 of the raw key then the int64 offset
 *     (big-endian, as a ByteBuffer writes it); probe i reads the big-endian int at
 *     hash[min(i, 12)] and adds max(0, i - 12) (Java int arithmetic), slot = Utils.abs(probe) %
 *     slots. A slot whose 24 bytes are zero is empty. get gives up after slots + 16 - 4 probes
 *     (0.10.1+; before that it could loop forever on a full map, which a load factor below 1
 *     never reaches). The buffer is allocated at the first put and zeroed by clear.
 *   - DigestSet: the distinct key digests of a dirty section (the dedupe-buffer advice), in a
 *     bounded table, part by part.
 *   - WriterTable: per consumer group records / byte share / first and last commit timestamp,
 *     keyed by the group id's UTF-8 bytes, in first-seen order.
 *   - scan_window / map_window / clean_window / needed_window: the four reads of the emulation
 *     (offsets_auditor/cleaner/partition_scan.py scan_partition; passes.py _map_whole_segments,
 *     _map_segment_until_full, _map_partial, _clean_batch/_retain; requirements.py), each over a
 *     run of WHOLE simple entries of window[start:end]:
 *
 *       - magic 0/1 plain messages (codec none), CRC-32 valid, framed exactly as
 *         offsets_auditor/records/legacy.py accepts them;
 *       - magic 2 batches that are uncompressed, not control, not transactional, with no
 *         producer id (producerId < 0) and at least one record, CRC-32C valid, framed exactly as
 *         offsets_auditor/records/default.py and varint.py accept them.
 *
 *     At the first entry that is anything else (or too big, or past the alive bitmaps) a window
 *     function stops and returns that entry's window offset: the Python code takes that entry,
 *     so results are the same with or without this module (tests/test_cleaner_fast.py). It never
 *     reads outside window[start:end].
 *
 * Where the time goes, and what is done about it: entries are read ahead in chunks of at most
 * CHUNK_RECORDS records (a constant), the MD5 digests a chunk needs are computed 16 (AVX-512) or
 * 8 (AVX2) keys at a time, and the map slots of the coming records are prefetched; the CRC-32 of
 * legacy messages folds with PCLMULQDQ, the CRC-32C of v2 batches uses SSE 4.2; the map buffer
 * is offered to transparent huge pages. Every such path has a portable fallback and is checked
 * against hashlib / zlib / crc32c in the tests.
 *
 * Nothing here holds state between calls except the objects the caller passes in; the CRC tables
 * and the CPU features are set once at import (`_simd` lets the tests pick the MD5 width).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SSE42_CRC32C 1
#include <immintrin.h>
#include <nmmintrin.h>
#endif

/* Entries larger than this are left to Python (keeps the size arithmetic within int64). */
#define MAX_ENTRY_BYTES (256LL * 1024 * 1024)
#define HASH_SIZE 16
#define BYTES_PER_ENTRY 24
#define RECORD_BATCH_OVERHEAD 61

/* ------------------------------- CRCs, big-endian reads, varints -- */

#include "_kafka_wire.h"

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
md5_digest(const unsigned char *p, int64_t n, unsigned char out[HASH_SIZE])
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

/* ------------------------------------------------------------- big-endian writes -- */

static inline void
put_be64(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)u;
        u >>= 8;
    }
}

/* ---------------------------------------------------------- one entry, its records -- */

typedef struct {
    int64_t offset;
    int64_t timestamp;
    const unsigned char *key; /* NULL when the key is null */
    int64_t key_len;
    const unsigned char *value; /* NULL when the value is null (a tombstone) */
    int64_t value_len;
    int need;                          /* the caller wants this record's digest */
    unsigned char digest[HASH_SIZE]; /* MD5 of the key, when `need` (md5_many) */
} Rec;

/* A run of whole entries read ahead from a window: their records share one array, and the
 * digests the caller needs are computed for all of them at once (md5_many). */
typedef struct {
    Py_ssize_t pos; /* in the window */
    int64_t n;      /* bytes */
    int64_t rec0;   /* first record in Chunk.recs */
    int64_t count;
    int magic;
    int64_t size;        /* header.size: 12 + the size/length field */
    int64_t last_offset; /* header.last_offset */
    int64_t max_timestamp;
} Entry;

typedef struct {
    Rec *recs;
    int64_t rec_cap;
    int64_t nrec;
    Entry *entries;
    int64_t ent_cap;
    int64_t nent;
    int more; /* the window may hold more simple entries after the last one read */
} Chunk;

/* Records read ahead per chunk (a constant, whatever the segment). */
#define CHUNK_RECORDS 512

static int
chunk_reserve(Chunk *c, int64_t records)
{
    if (c->nrec + records > c->rec_cap) {
        int64_t cap = c->rec_cap ? c->rec_cap : 1024;
        while (cap < c->nrec + records) {
            cap *= 2;
        }
        Rec *grown = PyMem_Realloc(c->recs, (size_t)cap * sizeof(Rec));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->recs = grown;
        c->rec_cap = cap;
    }
    if (c->nent == c->ent_cap) {
        int64_t cap = c->ent_cap ? c->ent_cap * 2 : 256;
        Entry *grown = PyMem_Realloc(c->entries, (size_t)cap * sizeof(Entry));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->entries = grown;
        c->ent_cap = cap;
    }
    return 0;
}

static void
chunk_free(Chunk *c)
{
    PyMem_Free(c->recs);
    PyMem_Free(c->entries);
}

/* A plain legacy message p[0:n] into r / e: 1 if simple and valid, 0 if not. */
static int
parse_legacy(const unsigned char *p, int64_t n, Rec *r, Entry *e)
{
    int magic = p[16];
    int attributes = p[17];
    if ((attributes & 0x07) != 0) {
        return 0; /* a compressed wrapper */
    }
    if (n - 12 < (magic == 1 ? 22 : 14)) {
        return 0;
    }
    if (crc32_zlib(p + 16, n - 16) != be32u(p + 12)) {
        return 0;
    }
    int64_t at = 18;
    int64_t timestamp = -1;
    if (magic == 1) {
        timestamp = be64(p + 18);
        at = 26;
    }
    int64_t key_len = be32(p + at); /* the overhead check leaves room for both lengths */
    at += 4;
    if (key_len == -1) {
        r->key = NULL;
        r->key_len = 0;
    }
    else if (key_len < 0 || n - at < key_len) {
        return 0;
    }
    else {
        r->key = p + at;
        r->key_len = key_len;
        at += key_len;
    }
    if (n - at < 4) {
        return 0;
    }
    int64_t value_len = be32(p + at);
    at += 4;
    if (value_len == -1) {
        r->value = NULL;
        r->value_len = 0;
    }
    else if (value_len < 0 || n - at < value_len) {
        return 0;
    }
    else {
        r->value = p + at;
        r->value_len = value_len;
        at += value_len;
    }
    if (at != n) {
        return 0;
    }
    r->offset = be64(p);
    r->timestamp = timestamp;
    e->count = 1;
    e->magic = magic;
    e->size = n;
    e->last_offset = r->offset;
    e->max_timestamp = timestamp;
    return 1;
}

/* A simple v2 batch p[0:n] into the chunk's records / e: 1 if taken, 0 if not, -1 on memory
 * error. */
static int
parse_batch(const unsigned char *p, int64_t n, Chunk *c, Entry *e)
{
    if (n < RECORD_BATCH_OVERHEAD) {
        return 0;
    }
    int attributes = be16(p + 21);
    if ((attributes & 0x07) != 0 || (attributes & 0x30) != 0) {
        return 0; /* compressed, transactional or control */
    }
    if (be64(p + 43) >= 0) {
        return 0; /* a producer id: producer state the Python code tracks */
    }
    int64_t count = be32(p + 57);
    int64_t at = RECORD_BATCH_OVERHEAD;
    if (count <= 0 || count > n - at) {
        return 0;
    }
    if (crc32_castagnoli(p + 21, n - 21) != be32u(p + 17)) {
        return 0;
    }
    int64_t base_offset = be64(p);
    int64_t last_delta = be32(p + 23);
    if ((last_delta > 0 && base_offset > INT64_MAX - last_delta)
        || (last_delta < 0 && base_offset < INT64_MIN - last_delta)) {
        return 0;
    }
    int64_t base_timestamp = be64(p + 27);
    int64_t max_timestamp = be64(p + 35);
    int log_append_time = (attributes & 0x08) != 0;
    if (chunk_reserve(c, count) < 0) {
        return -1;
    }
    for (int64_t index = 0; index < count; index++) {
        Rec *r = &c->recs[c->nrec + index];
        int64_t length, timestamp_delta, offset_delta, key_len, value_len, headers;
        if (!read_varint(p, &at, n, 5, &length)) {
            return 0;
        }
        int64_t record_end = at + length;
        if (length < 0 || record_end > n) {
            return 0;
        }
        at += 1; /* attributes */
        if (!read_varint(p, &at, record_end, 10, &timestamp_delta)
            || !read_varint(p, &at, record_end, 5, &offset_delta)
            || !read_varint(p, &at, record_end, 5, &key_len)) {
            return 0;
        }
        if (key_len < 0) {
            r->key = NULL;
            r->key_len = 0;
        }
        else if (key_len > record_end - at) {
            return 0;
        }
        else {
            r->key = p + at;
            r->key_len = key_len;
            at += key_len;
        }
        if (!read_varint(p, &at, record_end, 5, &value_len)) {
            return 0;
        }
        if (value_len < 0) {
            r->value = NULL;
            r->value_len = 0;
        }
        else if (value_len > record_end - at) {
            return 0;
        }
        else {
            r->value = p + at;
            r->value_len = value_len;
            at += value_len;
        }
        if (!read_varint(p, &at, record_end, 5, &headers)) {
            return 0;
        }
        if (headers < 0 || headers > record_end - at) {
            return 0;
        }
        for (int64_t h = 0; h < headers; h++) {
            int64_t hk, hv;
            if (!read_varint(p, &at, record_end, 5, &hk) || hk < 0 || hk > record_end - at) {
                return 0;
            }
            at += hk;
            if (!read_varint(p, &at, record_end, 5, &hv)) {
                return 0;
            }
            if (hv >= 0) {
                if (hv > record_end - at) {
                    return 0;
                }
                at += hv;
            }
        }
        if (at != record_end) {
            return 0;
        }
        if ((offset_delta > 0 && base_offset > INT64_MAX - offset_delta)
            || (offset_delta < 0 && base_offset < INT64_MIN - offset_delta)) {
            return 0; /* Python's ints do not overflow: leave it to Python */
        }
        r->offset = base_offset + offset_delta;
        if (log_append_time) {
            r->timestamp = max_timestamp;
        }
        else {
            if ((timestamp_delta > 0 && base_timestamp > INT64_MAX - timestamp_delta)
                || (timestamp_delta < 0 && base_timestamp < INT64_MIN - timestamp_delta)) {
                return 0;
            }
            r->timestamp = base_timestamp + timestamp_delta;
        }
    }
    if (at != n) {
        return 0;
    }
    e->count = count;
    e->magic = 2;
    e->size = n;
    e->last_offset = base_offset + last_delta;
    e->max_timestamp = max_timestamp;
    return 1;
}

/* Read the simple entries of window[pos:end] into c (emptied first), up to about
 * CHUNK_RECORDS records: 0, or -1 on memory error. c->more is 0 when reading stopped at an
 * entry that is not simple (or at the end of the window). */
static int
read_chunk(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Chunk *c)
{
    c->nrec = 0;
    c->nent = 0;
    c->more = 1;
    while (c->nrec < CHUNK_RECORDS) {
        if (end - pos <= 17) { /* HEADER_SIZE_UP_TO_MAGIC or fewer bytes: not an entry */
            c->more = 0;
            return 0;
        }
        int64_t size = be32(p + pos + 8);
        int64_t len = 12 + size;
        int magic = p[pos + 16];
        if (size < 14 || len > end - pos || len > MAX_ENTRY_BYTES) {
            c->more = 0;
            return 0;
        }
        if (chunk_reserve(c, 1) < 0) {
            return -1;
        }
        Entry *e = &c->entries[c->nent];
        int rc;
        if (magic == 2) {
            rc = parse_batch(p + pos, len, c, e);
        }
        else if (magic == 0 || magic == 1) {
            rc = parse_legacy(p + pos, len, &c->recs[c->nrec], e);
        }
        else {
            rc = 0;
        }
        if (rc <= 0) {
            c->more = 0;
            return rc;
        }
        e->pos = pos;
        e->n = len;
        e->rec0 = c->nrec;
        c->nrec += e->count;
        c->nent++;
        pos += (Py_ssize_t)len;
    }
    return 0;
}

/* ----------------------------------------------- MD5 of many keys at once (SIMD) -- */

/* The same RFC 1321 rounds, 16 keys at a time in AVX-512 lanes (ternary logic computes F, G,
 * H and I in one instruction) or 8 at a time with AVX2; each lane's padded message is gathered
 * word by word. Keys of up to MANY_MAX_KEY bytes (two blocks) go in lanes, longer ones through
 * md5_digest. tests/test_cleaner_fast.py checks every path against hashlib. */
#define MANY_MAX_KEY 119
static int have_avx512 = 0;
static int have_avx2 = 0;
static int simd_width = 1; /* the widest the CPU has, set at import */

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
md5_x16(Rec *const *recs, int lanes)
{
    unsigned char blk[16 * 128] __attribute__((aligned(64)));
    unsigned mask2 = 0;
    for (int l = 0; l < 16; l++) {
        const Rec *r = recs[l < lanes ? l : 0];
        if (pad_lane(blk + 128 * l, r->key, r->key_len) == 2) {
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
        lane_digest(recs[l]->digest, A[l], B[l], C[l], D[l]);
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
md5_x8(Rec *const *recs, int lanes)
{
    unsigned char blk[8 * 128] __attribute__((aligned(32)));
    int mask2 = 0;
    for (int l = 0; l < 8; l++) {
        const Rec *r = recs[l < lanes ? l : 0];
        if (pad_lane(blk + 128 * l, r->key, r->key_len) == 2) {
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
        lane_digest(recs[l]->digest, A[l], B[l], C[l], D[l]);
    }
}
#endif

/* Set rec.digest for every record of the chunk with rec.need. */
static void
md5_many(Chunk *c)
{
    Rec *lanes[16];
    int width = simd_width;
    int used = 0;
    for (int64_t i = 0; i < c->nrec; i++) {
        Rec *r = &c->recs[i];
        if (!r->need) {
            continue;
        }
        if (width == 1 || r->key_len > MANY_MAX_KEY) {
            md5_digest(r->key, r->key_len, r->digest);
            continue;
        }
        lanes[used++] = r;
        if (used == width) {
#ifdef HAVE_SSE42_CRC32C
            if (width == 16) {
                md5_x16(lanes, used);
            }
            else {
                md5_x8(lanes, used);
            }
#endif
            used = 0;
        }
    }
    if (used > 0 && used < 3) {
        for (int l = 0; l < used; l++) {
            md5_digest(lanes[l]->key, lanes[l]->key_len, lanes[l]->digest);
        }
    }
    else if (used > 0) {
#ifdef HAVE_SSE42_CRC32C
        if (width == 16) {
            md5_x16(lanes, used);
        }
        else {
            md5_x8(lanes, used);
        }
#endif
    }
}

/* ------------------------------------------------------------------ SkimpyOffsetMap -- */

typedef struct {
    PyObject_HEAD
    int64_t slots;
    unsigned char *bytes; /* slots * 24, allocated at the first put */
    int64_t entries;
    int64_t latest_offset;
    int dirty; /* something was written since the buffer was last zeroed */
    void *raw; /* the allocation holding `bytes` (buffer_new) */
    size_t raw_len;
} OffsetMapObject;

static PyTypeObject OffsetMapType;

/* The map's zeroed buffer of `size` bytes; *raw / *raw_len are what buffer_free releases. On
 * Linux: anonymous memory aligned to 2 MiB and offered to transparent huge pages (a random probe
 * then needs one TLB entry per 2 MiB rather than per 4 KiB). */
static unsigned char *
buffer_new(size_t size, void **raw, size_t *raw_len)
{
#ifdef __linux__
    size_t huge = (size_t)2 << 20;
    size_t length = size + huge;
    unsigned char *start =
        mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (start == MAP_FAILED) {
        return NULL;
    }
    unsigned char *aligned =
        (unsigned char *)(((uintptr_t)start + huge - 1) & ~(uintptr_t)(huge - 1));
    madvise(aligned, size, MADV_HUGEPAGE);
    *raw = start;
    *raw_len = length;
    return aligned;
#else
    unsigned char *bytes = calloc(size, 1);
    *raw = bytes;
    *raw_len = size;
    return bytes;
#endif
}

static void
buffer_free(void *raw, size_t raw_len)
{
    if (raw == NULL) {
        return;
    }
#ifdef __linux__
    munmap(raw, raw_len);
#else
    (void)raw_len;
    free(raw);
#endif
}

/* Kafka's positionOf: byte position of probe `attempt` for `hash`. */
static inline int64_t
position_of(const OffsetMapObject *m, const unsigned char *hash, int64_t attempt)
{
    int64_t at = attempt < HASH_SIZE - 4 ? attempt : HASH_SIZE - 4;
    int64_t extra = attempt - (HASH_SIZE - 4) > 0 ? attempt - (HASH_SIZE - 4) : 0;
    int32_t probe = (int32_t)(be32u(hash + at) + (uint32_t)extra); /* Java int addition */
    int64_t positive = probe == INT32_MIN ? 0 : (probe < 0 ? -(int64_t)probe : probe);
    return (positive % m->slots) * BYTES_PER_ENTRY;
}

static inline int
slot_is_empty(const unsigned char *slot)
{
    static const unsigned char zero[BYTES_PER_ENTRY];
    return memcmp(slot, zero, BYTES_PER_ENTRY) == 0;
}

/* Kafka's put; 0 when the map is full (entries == slots: Kafka's require fails), else 1. */
static int
map_put(OffsetMapObject *m, const unsigned char *hash, int64_t offset)
{
    if (m->entries >= m->slots) {
        return 0;
    }
    if (m->bytes == NULL) {
        m->bytes = buffer_new((size_t)m->slots * BYTES_PER_ENTRY, &m->raw, &m->raw_len);
        if (m->bytes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    m->dirty = 1;
    int64_t attempt = 0;
    int64_t pos = position_of(m, hash, attempt);
    while (!slot_is_empty(m->bytes + pos)) {
        if (memcmp(m->bytes + pos, hash, HASH_SIZE) == 0) {
            put_be64(m->bytes + pos + HASH_SIZE, offset);
            m->latest_offset = offset;
            return 1;
        }
        attempt++;
        pos = position_of(m, hash, attempt);
    }
    memcpy(m->bytes + pos, hash, HASH_SIZE);
    put_be64(m->bytes + pos + HASH_SIZE, offset);
    m->latest_offset = offset;
    m->entries++;
    return 1;
}

/* Kafka's get (0.10.1+ bounded probing): the offset, or -1 when absent. */
static int64_t
map_get(const OffsetMapObject *m, const unsigned char *hash)
{
    if (m->bytes == NULL) {
        return -1;
    }
    int64_t max_attempts = m->slots + HASH_SIZE - 4;
    int64_t attempt = 0;
    int64_t pos;
    do {
        if (attempt >= max_attempts) {
            return -1;
        }
        pos = position_of(m, hash, attempt);
        if (slot_is_empty(m->bytes + pos)) {
            return -1;
        }
        attempt++;
    } while (memcmp(m->bytes + pos, hash, HASH_SIZE) != 0);
    return be64(m->bytes + pos + HASH_SIZE);
}

static PyObject *
OffsetMap_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"slots", NULL};
    long long slots;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "L:SkimpyOffsetMap", kwlist, &slots)) {
        return NULL;
    }
    if (slots < 1 || slots > (long long)(PY_SSIZE_T_MAX / BYTES_PER_ENTRY)
        || slots > (long long)INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "slots must be between 1 and Int.MaxValue");
        return NULL;
    }
    OffsetMapObject *self = (OffsetMapObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->slots = slots;
    self->bytes = NULL;
    self->entries = 0;
    self->latest_offset = -1;
    self->dirty = 0;
    self->raw = NULL;
    self->raw_len = 0;
    return (PyObject *)self;
}

static void
OffsetMap_dealloc(OffsetMapObject *self)
{
    buffer_free(self->raw, self->raw_len);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* MD5 of a bytes-like argument. */
static int
digest_arg(PyObject *arg, unsigned char out[HASH_SIZE])
{
    Py_buffer key;
    if (PyObject_GetBuffer(arg, &key, PyBUF_SIMPLE) < 0) {
        return -1;
    }
    md5_digest(key.buf, key.len, out);
    PyBuffer_Release(&key);
    return 0;
}

static PyObject *
OffsetMap_put(OffsetMapObject *self, PyObject *args)
{
    PyObject *key;
    long long offset;
    if (!PyArg_ParseTuple(args, "OL:put", &key, &offset)) {
        return NULL;
    }
    unsigned char hash[HASH_SIZE];
    if (digest_arg(key, hash) < 0) {
        return NULL;
    }
    int rc = map_put(self, hash, offset);
    if (rc < 0) {
        return NULL;
    }
    return PyBool_FromLong(rc);
}

static PyObject *
OffsetMap_get(OffsetMapObject *self, PyObject *key)
{
    unsigned char hash[HASH_SIZE];
    if (digest_arg(key, hash) < 0) {
        return NULL;
    }
    return PyLong_FromLongLong(map_get(self, hash));
}

static PyObject *
OffsetMap_update_latest_offset(OffsetMapObject *self, PyObject *arg)
{
    long long offset = PyLong_AsLongLong(arg);
    if (offset == -1 && PyErr_Occurred()) {
        return NULL;
    }
    self->latest_offset = offset;
    Py_RETURN_NONE;
}

static PyObject *
OffsetMap_clear(OffsetMapObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->bytes != NULL && self->dirty) {
        memset(self->bytes, 0, (size_t)self->slots * BYTES_PER_ENTRY);
    }
    self->dirty = 0;
    self->entries = 0;
    self->latest_offset = -1;
    Py_RETURN_NONE;
}

static PyObject *
OffsetMap_items(OffsetMapObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(0);
    if (list == NULL || self->bytes == NULL) {
        return list;
    }
    for (int64_t slot = 0; slot < self->slots; slot++) {
        const unsigned char *at = self->bytes + slot * BYTES_PER_ENTRY;
        if (slot_is_empty(at)) {
            continue;
        }
        PyObject *item = Py_BuildValue("(y#L)", (const char *)at, (Py_ssize_t)HASH_SIZE,
                                       (long long)be64(at + HASH_SIZE));
        if (item == NULL || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    return list;
}

static PyObject *
OffsetMap_get_size(OffsetMapObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->entries);
}

static PyObject *
OffsetMap_get_slots(OffsetMapObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->slots);
}

static PyObject *
OffsetMap_get_latest(OffsetMapObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->latest_offset);
}

static PyObject *
OffsetMap_get_allocated(OffsetMapObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->bytes ? self->slots * BYTES_PER_ENTRY : 0);
}

static PyMethodDef OffsetMap_methods[] = {
    {"put", (PyCFunction)OffsetMap_put, METH_VARARGS,
     "put(key, offset) -> bool: Kafka's put of MD5(key); False (nothing changed) when full."},
    {"get", (PyCFunction)OffsetMap_get, METH_O, "get(key) -> offset, or -1 when absent."},
    {"update_latest_offset", (PyCFunction)OffsetMap_update_latest_offset, METH_O,
     "updateLatestOffset(offset)."},
    {"clear", (PyCFunction)OffsetMap_clear, METH_NOARGS, "Zero the buffer; size 0, latest -1."},
    {"items", (PyCFunction)OffsetMap_items, METH_NOARGS, "[(digest, offset)] of every slot used."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef OffsetMap_getset[] = {
    {"size", (getter)OffsetMap_get_size, NULL, "distinct digests stored (entries)", NULL},
    {"slots", (getter)OffsetMap_get_slots, NULL, "memory / 24", NULL},
    {"latest_offset", (getter)OffsetMap_get_latest, NULL, "latestOffset", NULL},
    {"allocated_bytes", (getter)OffsetMap_get_allocated, NULL, "bytes of the buffer, 0 until used",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject OffsetMapType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "offsets_auditor._cleaner_speedups.SkimpyOffsetMap",
    .tp_basicsize = sizeof(OffsetMapObject),
    .tp_dealloc = (destructor)OffsetMap_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Kafka's SkimpyOffsetMap: slots * 24 bytes of MD5 digest + int64 offset.",
    .tp_methods = OffsetMap_methods,
    .tp_getset = OffsetMap_getset,
    .tp_new = OffsetMap_new,
};

/* ---------------------------------------------------------------------- DigestSet -- */

/* Distinct key digests for the dedupe-buffer advice, in at most `limit` bytes: a sweep counts
 * only the digests of one of `parts` parts (by digest bytes 8-15), so a section with more keys
 * than fit is counted in several sweeps with the same memory. When a new digest does not fit,
 * the set is `overflowed` and the sweep must be redone with more parts. */
typedef struct {
    PyObject_HEAD
    unsigned char *slots; /* capacity * 16; an all-zero digest marks an empty slot */
    int64_t capacity;     /* a power of two */
    int64_t max_capacity; /* the largest power of two within the limit */
    int64_t size;
    uint64_t parts;
    uint64_t part;
    int has_zero; /* the all-zero digest itself was added */
    int overflowed;
} DigestSetObject;

static PyTypeObject DigestSetType;

static inline uint64_t
digest_hash(const unsigned char *d)
{
    uint64_t h;
    memcpy(&h, d, 8);
    return h;
}

static inline int
set_member(const DigestSetObject *s, const unsigned char *d)
{
    uint64_t h;
    memcpy(&h, d + 8, 8);
    return s->parts <= 1 || h % s->parts == s->part;
}

static int
set_insert_raw(unsigned char *slots, int64_t capacity, const unsigned char *d)
{
    static const unsigned char zero[HASH_SIZE];
    int64_t mask = capacity - 1;
    int64_t i = (int64_t)(digest_hash(d) & (uint64_t)mask);
    for (;;) {
        unsigned char *slot = slots + i * HASH_SIZE;
        if (memcmp(slot, zero, HASH_SIZE) == 0) {
            memcpy(slot, d, HASH_SIZE);
            return 1;
        }
        if (memcmp(slot, d, HASH_SIZE) == 0) {
            return 0;
        }
        i = (i + 1) & mask;
    }
}

static int
set_contains(const DigestSetObject *s, const unsigned char *d)
{
    static const unsigned char zero[HASH_SIZE];
    if (s->capacity == 0) {
        return 0;
    }
    int64_t mask = s->capacity - 1;
    for (int64_t i = (int64_t)(digest_hash(d) & (uint64_t)mask);; i = (i + 1) & mask) {
        const unsigned char *slot = s->slots + i * HASH_SIZE;
        if (memcmp(slot, zero, HASH_SIZE) == 0) {
            return 0;
        }
        if (memcmp(slot, d, HASH_SIZE) == 0) {
            return 1;
        }
    }
}

/* Add digest d of this set's part: 1 if new, 0 if present (or it did not fit: overflowed), -1
 * on memory error. */
static int
set_add(DigestSetObject *s, const unsigned char *d)
{
    static const unsigned char zero[HASH_SIZE];
    if (memcmp(d, zero, HASH_SIZE) == 0) {
        if (s->has_zero) {
            return 0;
        }
        s->has_zero = 1;
        s->size++;
        return 1;
    }
    if ((s->size + 1) * 4 > s->capacity * 3) {
        if (set_contains(s, d)) {
            return 0;
        }
        if (s->capacity * 2 > s->max_capacity) {
            s->overflowed = 1;
            return 0;
        }
        int64_t capacity = s->capacity ? s->capacity * 2 : 1024;
        unsigned char *grown = calloc((size_t)capacity, HASH_SIZE);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (int64_t i = 0; i < s->capacity; i++) {
            const unsigned char *slot = s->slots + i * HASH_SIZE;
            if (memcmp(slot, zero, HASH_SIZE) != 0) {
                set_insert_raw(grown, capacity, slot);
            }
        }
        free(s->slots);
        s->slots = grown;
        s->capacity = capacity;
    }
    int added = set_insert_raw(s->slots, s->capacity, d);
    s->size += added;
    return added;
}

static PyObject *
DigestSet_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"limit", "parts", "part", NULL};
    long long limit = 0, parts = 1, part = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|LLL:DigestSet", kwlist, &limit, &parts,
                                     &part)) {
        return NULL;
    }
    if (limit < 0 || parts < 1 || part < 0 || part >= parts) {
        PyErr_SetString(PyExc_ValueError, "need limit >= 0 and 0 <= part < parts");
        return NULL;
    }
    DigestSetObject *self = (DigestSetObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    int64_t max_capacity = 1024;
    if (limit == 0) {
        max_capacity = (int64_t)1 << 40; /* no limit */
    }
    else {
        while (max_capacity * 2 * HASH_SIZE <= limit) {
            max_capacity *= 2;
        }
    }
    self->slots = NULL;
    self->capacity = 0;
    self->max_capacity = max_capacity;
    self->size = 0;
    self->parts = (uint64_t)parts;
    self->part = (uint64_t)part;
    self->has_zero = 0;
    self->overflowed = 0;
    return (PyObject *)self;
}

static void
DigestSet_dealloc(DigestSetObject *self)
{
    free(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
DigestSet_add(DigestSetObject *self, PyObject *key)
{
    unsigned char hash[HASH_SIZE];
    if (digest_arg(key, hash) < 0) {
        return NULL;
    }
    if (!set_member(self, hash)) {
        return PyLong_FromLong(-1);
    }
    int rc = set_add(self, hash);
    if (rc < 0) {
        return NULL;
    }
    return PyLong_FromLong(rc);
}

static PyObject *
DigestSet_get_size(DigestSetObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->size);
}

static PyObject *
DigestSet_get_allocated(DigestSetObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->capacity * HASH_SIZE);
}

static PyObject *
DigestSet_get_overflowed(DigestSetObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->overflowed);
}

static PyMethodDef DigestSet_methods[] = {
    {"add", (PyCFunction)DigestSet_add, METH_O,
     "add(key) -> 1 if MD5(key) is new, 0 if there (or it did not fit), -1 if of another part."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef DigestSet_getset[] = {
    {"size", (getter)DigestSet_get_size, NULL, "distinct digests", NULL},
    {"allocated_bytes", (getter)DigestSet_get_allocated, NULL, "bytes of the table", NULL},
    {"overflowed", (getter)DigestSet_get_overflowed, NULL, "a new digest did not fit", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DigestSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "offsets_auditor._cleaner_speedups.DigestSet",
    .tp_basicsize = sizeof(DigestSetObject),
    .tp_dealloc = (destructor)DigestSet_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "DigestSet(limit=0, parts=1, part=0): distinct MD5 digests of keys in part `part`\n"
              "of `parts`, in at most `limit` bytes (0: no limit).",
    .tp_methods = DigestSet_methods,
    .tp_getset = DigestSet_getset,
    .tp_new = DigestSet_new,
};

/* -------------------------------------------------------------------- WriterTable -- */

typedef struct {
    char *name; /* the group id, UTF-8 */
    Py_ssize_t len;
    uint64_t hash;
    long long records;
    double bytes;
    long long first_timestamp;
    long long last_timestamp;
} Writer;

typedef struct {
    PyObject_HEAD
    Writer *writers; /* in first-seen order */
    Py_ssize_t count;
    Py_ssize_t cap;
    Py_ssize_t *index; /* open addressing: writer number + 1, 0 = empty */
    Py_ssize_t index_cap;
} WriterTableObject;

static PyTypeObject WriterTableType;

static inline uint64_t
fnv1a(const unsigned char *p, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (Py_ssize_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

/* The writer for name[0:n], created when new; NULL on memory error. */
static Writer *
writer_for(WriterTableObject *t, const unsigned char *name, Py_ssize_t n)
{
    uint64_t h = fnv1a(name, n);
    if (t->index_cap) {
        Py_ssize_t mask = t->index_cap - 1;
        for (Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)mask);; i = (i + 1) & mask) {
            Py_ssize_t at = t->index[i];
            if (at == 0) {
                break;
            }
            Writer *w = &t->writers[at - 1];
            if (w->hash == h && w->len == n && memcmp(w->name, name, (size_t)n) == 0) {
                return w;
            }
        }
    }
    if ((t->count + 1) * 2 > t->index_cap) {
        Py_ssize_t cap = t->index_cap ? t->index_cap * 2 : 256;
        Py_ssize_t *index = PyMem_Calloc((size_t)cap, sizeof(Py_ssize_t));
        if (index == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        for (Py_ssize_t k = 0; k < t->count; k++) {
            Py_ssize_t i = (Py_ssize_t)(t->writers[k].hash & (uint64_t)(cap - 1));
            while (index[i]) {
                i = (i + 1) & (cap - 1);
            }
            index[i] = k + 1;
        }
        PyMem_Free(t->index);
        t->index = index;
        t->index_cap = cap;
    }
    if (t->count == t->cap) {
        Py_ssize_t cap = t->cap ? t->cap * 2 : 64;
        Writer *grown = PyMem_Realloc(t->writers, (size_t)cap * sizeof(Writer));
        if (grown == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        t->writers = grown;
        t->cap = cap;
    }
    char *copy = PyMem_Malloc(n ? (size_t)n : 1);
    if (copy == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy, name, (size_t)n);
    Writer *w = &t->writers[t->count];
    w->name = copy;
    w->len = n;
    w->hash = h;
    w->records = 0;
    w->bytes = 0.0;
    w->first_timestamp = -1;
    w->last_timestamp = -1;
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(t->index_cap - 1));
    while (t->index[i]) {
        i = (i + 1) & (t->index_cap - 1);
    }
    t->index[i] = ++t->count;
    return w;
}

/* GroupWrites update of partition_scan.scan_partition for one record. */
static inline void
writer_add(Writer *w, double share, long long ts)
{
    w->records += 1;
    w->bytes += share;
    if (ts >= 0) {
        if (w->first_timestamp < 0 || ts < w->first_timestamp) {
            w->first_timestamp = ts;
        }
        if (ts > w->last_timestamp) {
            w->last_timestamp = ts;
        }
    }
}

static PyObject *
WriterTable_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (!PyArg_ParseTuple(args, ":WriterTable") || (kwds && PyDict_Size(kwds))) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "WriterTable() takes no arguments");
        }
        return NULL;
    }
    WriterTableObject *self = (WriterTableObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->writers = NULL;
    self->count = self->cap = 0;
    self->index = NULL;
    self->index_cap = 0;
    return (PyObject *)self;
}

static void
WriterTable_dealloc(WriterTableObject *self)
{
    for (Py_ssize_t k = 0; k < self->count; k++) {
        PyMem_Free(self->writers[k].name);
    }
    PyMem_Free(self->writers);
    PyMem_Free(self->index);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
WriterTable_add(WriterTableObject *self, PyObject *args)
{
    const char *name;
    Py_ssize_t len;
    double share;
    long long ts;
    if (!PyArg_ParseTuple(args, "s#dL:add", &name, &len, &share, &ts)) {
        return NULL;
    }
    Writer *w = writer_for(self, (const unsigned char *)name, len);
    if (w == NULL) {
        return NULL;
    }
    writer_add(w, share, ts);
    Py_RETURN_NONE;
}

static PyObject *
WriterTable_items(WriterTableObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(self->count);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t k = 0; k < self->count; k++) {
        Writer *w = &self->writers[k];
        PyObject *item = Py_BuildValue("(s#LdLL)", w->name, w->len, w->records, w->bytes,
                                       w->first_timestamp, w->last_timestamp);
        if (item == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

static PyMethodDef WriterTable_methods[] = {
    {"add", (PyCFunction)WriterTable_add, METH_VARARGS,
     "add(group, share, timestamp): one record of group (timestamp -1 when unknown)."},
    {"items", (PyCFunction)WriterTable_items, METH_NOARGS,
     "[(group, records, bytes, first_timestamp, last_timestamp)] in first-seen order."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WriterTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "offsets_auditor._cleaner_speedups.WriterTable",
    .tp_basicsize = sizeof(WriterTableObject),
    .tp_dealloc = (destructor)WriterTable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Per consumer group writes of a partition, in first-seen order.",
    .tp_methods = WriterTable_methods,
    .tp_new = WriterTable_new,
};

/* ------------------------------------------- __consumer_offsets key/value helpers -- */

/* Strict UTF-8 as Python's decoder accepts it (no surrogates, overlongs, > U+10FFFF). */
static int
valid_utf8(const unsigned char *s, int64_t n)
{
    int64_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int64_t need;
        unsigned lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        }
        else if (c == 0xE0) {
            need = 2;
            lo = 0xA0;
        }
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
            need = 2;
        }
        else if (c == 0xED) {
            need = 2;
            hi = 0x9F;
        }
        else if (c == 0xF0) {
            need = 3;
            lo = 0x90;
        }
        else if (c >= 0xF1 && c <= 0xF3) {
            need = 3;
        }
        else if (c == 0xF4) {
            need = 3;
            hi = 0x8F;
        }
        else {
            return 0;
        }
        if (n - i - 1 < need) {
            return 0;
        }
        if (s[i + 1] < lo || s[i + 1] > hi) {
            return 0;
        }
        for (int64_t k = 2; k <= need; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                return 0;
            }
        }
        i += need + 1;
    }
    return 1;
}

/* partition_scan.group_of_key: 1 with the name and its length set, 0 for no group. */
static inline int
group_of_key(const Rec *r, const unsigned char **name, int64_t *len)
{
    if (r->key == NULL || r->key_len < 4) {
        return 0;
    }
    int64_t length = be16(r->key + 2);
    if (length < 0 || 4 + length > r->key_len) {
        return 0;
    }
    *name = r->key + 4;
    *len = length;
    return 1;
}

/* partition_scan.commit_timestamp_of, line for line. */
static long long
commit_timestamp_of(const Rec *r)
{
    if (r->key == NULL || r->value == NULL || r->key_len < 2 || r->value_len < 10) {
        return -1;
    }
    int key_type = be16(r->key);
    if (key_type != 0 && key_type != 1) {
        return -1;
    }
    const unsigned char *v = r->value;
    int64_t n = r->value_len;
    int version = be16(v);
    int64_t pos = 2 + 8 + (version >= 3 ? 4 : 0);
    if (version <= 3) {
        if (pos + 2 > n) {
            return -1;
        }
        int64_t len = be16(v + pos);
        pos += 2 + (len > 0 ? len : 0);
    }
    else if (version == 4) {
        uint64_t length = 0;
        int shift = 0;
        int huge = 0;
        while (pos < n) {
            unsigned byte = v[pos++];
            uint64_t bits = byte & 0x7F;
            if (bits) {
                if (shift >= 40) {
                    huge = 1; /* far beyond any value length: the read fails below */
                }
                else {
                    length |= bits << shift;
                }
            }
            shift += 7;
            if (byte < 0x80) {
                break;
            }
        }
        if (huge) {
            return -1;
        }
        pos += length > 1 ? (int64_t)(length - 1) : 0;
    }
    else {
        return -1;
    }
    return pos + 8 <= n ? (long long)be64(v + pos) : -1;
}

/* --------------------------------------------------------------- window functions -- */

typedef struct {
    Py_buffer window;
    Py_ssize_t start;
    Py_ssize_t end;
} Window;

static int
window_check(Window *w)
{
    if (w->end > w->window.len) {
        w->end = w->window.len;
    }
    if (w->start < 0 || w->start > w->end) {
        PyErr_SetString(PyExc_ValueError, "start must be within the window, before end");
        return -1;
    }
    return 0;
}

/* scan_window(window, start, end, writers, first_ts, largest, last)
 *   -> (next_rel, batches, records, first_ts, largest, last)
 * scan_partition's per-batch bookkeeping (segment stats and group writers). */
static PyObject *
scan_window(PyObject *module, PyObject *args)
{
    Window w;
    WriterTableObject *table;
    long long first_ts, largest, last;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nnO!LLL:scan_window", &w.window, &w.start, &w.end,
                          &WriterTableType, &table, &first_ts, &largest, &last)) {
        return NULL;
    }
    const unsigned char *p = w.window.buf;
    Chunk c = {0};
    long long batches = 0, records = 0;
    Py_ssize_t pos = w.start;
    int failed = 0, going = 1;
    if (window_check(&w) < 0) {
        failed = 1;
        goto done;
    }
    while (going) {
        if (read_chunk(p, pos, w.end, &c) < 0) {
            failed = 1;
            break;
        }
        going = c.more;
        for (int64_t j = 0; j < c.nent; j++) {
            const Entry *e = &c.entries[j];
            const Rec *recs = &c.recs[e->rec0];
            /* every group id must be one Python decodes without replacement */
            int plain = 1;
            for (int64_t k = 0; k < e->count && plain; k++) {
                const unsigned char *name;
                int64_t len;
                if (group_of_key(&recs[k], &name, &len) && !valid_utf8(name, len)) {
                    plain = 0;
                }
            }
            if (!plain) {
                going = 0;
                break;
            }
            batches++;
            records += e->count;
            if (first_ts < 0) {
                first_ts = e->magic == 2 ? e->max_timestamp : recs[0].timestamp;
            }
            if (e->magic == 2) {
                if (e->max_timestamp > largest) {
                    largest = e->max_timestamp;
                }
                if (e->last_offset > last) {
                    last = e->last_offset;
                }
            }
            else {
                for (int64_t k = 0; k < e->count; k++) {
                    if (recs[k].timestamp > largest) {
                        largest = recs[k].timestamp;
                    }
                }
                if (recs[e->count - 1].offset > last) {
                    last = recs[e->count - 1].offset;
                }
            }
            double share = (double)e->size / (double)e->count;
            for (int64_t k = 0; k < e->count; k++) {
                const Rec *r = &recs[k];
                const unsigned char *name;
                int64_t len;
                if (!group_of_key(r, &name, &len)) {
                    continue;
                }
                Writer *writer = writer_for(table, name, (Py_ssize_t)len);
                if (writer == NULL) {
                    failed = 1;
                    goto done;
                }
                long long ts = r->timestamp;
                if (ts < 0) {
                    ts = commit_timestamp_of(r);
                }
                writer_add(writer, share, ts);
            }
            pos = e->pos + (Py_ssize_t)e->n;
        }
    }
done:
    chunk_free(&c);
    PyBuffer_Release(&w.window);
    if (failed) {
        return NULL;
    }
    return Py_BuildValue("(nLLLLL)", pos, batches, records, first_ts, largest, last);
}

enum { MODE_SEGMENT_SPAN = 0, MODE_FIRST_SEGMENT = 1, MODE_PARTIAL = 2 };
enum { STATUS_GOING = 0, STATUS_FULL = 1 };

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* How many entries ahead the map slots of coming records are prefetched. */
#define PREFETCH_AHEAD 12

static inline void
prefetch_entry(const OffsetMapObject *m, const Chunk *c, int64_t j)
{
    if (j >= c->nent || m->bytes == NULL) {
        return;
    }
    const Entry *e = &c->entries[j];
    for (int64_t k = 0; k < e->count; k++) {
        const Rec *r = &c->recs[e->rec0 + k];
        if (r->need) {
            PREFETCH(m->bytes + position_of(m, r->digest, 0));
        }
    }
}

/* Chunk entries past the ordinals' bitmaps are cut off (Python takes them: it fails the same
 * way it would have without this module). */
static void
cut_to_bitmaps(Chunk *c, Py_ssize_t b, Py_ssize_t r, Py_ssize_t batches, Py_ssize_t records)
{
    for (int64_t j = 0; j < c->nent; j++) {
        const Entry *e = &c->entries[j];
        if (b + j < 0 || b + j >= batches || r < 0 || e->count > records - r) {
            c->nent = j;
            c->more = 0;
            return;
        }
        r += (Py_ssize_t)e->count;
    }
}

/* map_window(window, start, end, map, alive, batch_alive, batch, record, mode, start_offset,
 *            max_desired)
 *   -> (next_rel, batch, record, status, seen, last, txn_seen, txn_max)
 * The offset map's build over live batches (passes.py): mode 0 _map_whole_segments (0.9), 1
 * _map_segment_until_full (0.10.0), 2 _map_partial (0.10.1+). `seen`/`last`: whether a live
 * record was read and the offset of the last one (modes 0/1). `txn_seen`/`txn_max`: the largest
 * last offset of the batches given to CleanedTransactionMetadata.onBatchRead (mode 2). Status 1:
 * the map filled up inside the last entry taken. */
static PyObject *
map_window(PyObject *module, PyObject *args)
{
    Window w;
    OffsetMapObject *m;
    Py_buffer alive, batch_alive;
    Py_ssize_t b, r;
    int mode;
    long long start_offset, max_desired;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nnO!w*y*nniLL:map_window", &w.window, &w.start, &w.end,
                          &OffsetMapType, &m, &alive, &batch_alive, &b, &r, &mode,
                          &start_offset, &max_desired)) {
        return NULL;
    }
    const unsigned char *p = w.window.buf;
    unsigned char *alive_bits = alive.buf;
    const unsigned char *batch_bits = batch_alive.buf;
    Chunk c = {0};
    int status = STATUS_GOING, seen = 0, txn_seen = 0, failed = 0, going = 1;
    long long last = 0, txn_max = 0;
    Py_ssize_t pos = w.start;
    if (window_check(&w) < 0) {
        failed = 1;
        goto done;
    }
    while (going && status == STATUS_GOING) {
        if (read_chunk(p, pos, w.end, &c) < 0) {
            failed = 1;
            break;
        }
        cut_to_bitmaps(&c, b, r, batch_alive.len, alive.len);
        going = c.more;
        /* the digests the loop below will want */
        Py_ssize_t rr = r;
        for (int64_t j = 0; j < c.nent; j++) {
            const Entry *e = &c.entries[j];
            int live = batch_bits[b + j]
                       && (mode != MODE_PARTIAL || e->last_offset >= start_offset);
            for (int64_t k = 0; k < e->count; k++) {
                Rec *rec = &c.recs[e->rec0 + k];
                rec->need = live && alive_bits[rr + k] && rec->key != NULL
                            && (mode != MODE_PARTIAL || rec->offset >= start_offset);
            }
            rr += (Py_ssize_t)e->count;
        }
        md5_many(&c);
        for (int64_t j = 0; j < PREFETCH_AHEAD; j++) {
            prefetch_entry(m, &c, j);
        }
        for (int64_t j = 0; j < c.nent; j++) {
            const Entry *e = &c.entries[j];
            prefetch_entry(m, &c, j + PREFETCH_AHEAD);
            if (!batch_bits[b]) {
                b += 1;
                r += (Py_ssize_t)e->count;
                pos = e->pos + (Py_ssize_t)e->n;
                continue;
            }
            if (m->entries + e->count > m->slots) {
                going = 0; /* a put could find the map full: Python's OffsetMap handles that */
                break;
            }
            if (mode == MODE_PARTIAL) {
                if (e->last_offset < start_offset) {
                    b += 1;
                    r += (Py_ssize_t)e->count;
                    pos = e->pos + (Py_ssize_t)e->n;
                    continue;
                }
                if (!txn_seen || e->last_offset > txn_max) {
                    txn_max = e->last_offset;
                }
                txn_seen = 1;
            }
            for (int64_t k = 0; k < e->count; k++) {
                const Rec *rec = &c.recs[e->rec0 + k];
                if (!alive_bits[r + k]) {
                    continue;
                }
                if (rec->key != NULL && (mode != MODE_PARTIAL || rec->offset >= start_offset)) {
                    if (mode != MODE_SEGMENT_SPAN && m->entries >= max_desired) {
                        status = STATUS_FULL;
                        break;
                    }
                    if (map_put(m, rec->digest, rec->offset) < 0) {
                        failed = 1;
                        goto done;
                    }
                }
                if (mode != MODE_PARTIAL) {
                    last = rec->offset;
                    seen = 1;
                }
            }
            if (status == STATUS_GOING && mode == MODE_PARTIAL) {
                m->latest_offset = e->last_offset;
            }
            b += 1;
            r += (Py_ssize_t)e->count;
            pos = e->pos + (Py_ssize_t)e->n;
            if (status != STATUS_GOING) {
                break;
            }
        }
    }
done:
    chunk_free(&c);
    PyBuffer_Release(&w.window);
    PyBuffer_Release(&alive);
    PyBuffer_Release(&batch_alive);
    if (failed) {
        return NULL;
    }
    return Py_BuildValue("(nnniiLiL)", pos, b, r, status, seen, last, txn_seen, txn_max);
}

static inline int64_t
record_weight(const Rec *rec)
{
    return 8 + rec->key_len + rec->value_len; /* null key/value: length 0 here */
}

/* clean_window(window, start, end, map, alive, batch_alive, batch, record, legacy_rules,
 *              shallow, retain_deletes)
 *   -> (next_rel, batch, record, start_records, start_bytes, end_records, end_bytes, inexact,
 *       tombstones_kept, tombstones_dropped, invalid_dropped, size, txn_seen, txn_max)
 * passes.py _clean_batch and _retain over live batches; `size` is the bytes kept, `inexact` set
 * when a size had to be estimated; `txn_*` as in map_window for the batches _clean_batch gives to
 * onBatchRead (v2, 0.10.1+ rules). */
static PyObject *
clean_window(PyObject *module, PyObject *args)
{
    Window w;
    OffsetMapObject *m;
    Py_buffer alive, batch_alive;
    Py_ssize_t b, r;
    int legacy_rules, shallow, retain_deletes;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nnO!w*w*nnppp:clean_window", &w.window, &w.start, &w.end,
                          &OffsetMapType, &m, &alive, &batch_alive, &b, &r, &legacy_rules,
                          &shallow, &retain_deletes)) {
        return NULL;
    }
    const unsigned char *p = w.window.buf;
    unsigned char *alive_bits = alive.buf;
    unsigned char *batch_bits = batch_alive.buf;
    Chunk c = {0};
    long long start_records = 0, start_bytes = 0, end_records = 0, end_bytes = 0;
    long long tombstones_kept = 0, tombstones_dropped = 0, invalid = 0, size_total = 0;
    long long txn_max = 0;
    int inexact = 0, txn_seen = 0, failed = 0, going = 1;
    int64_t latest = m->latest_offset;
    Py_ssize_t pos = w.start;
    if (window_check(&w) < 0) {
        failed = 1;
        goto done;
    }
    while (going) {
        if (read_chunk(p, pos, w.end, &c) < 0) {
            failed = 1;
            break;
        }
        cut_to_bitmaps(&c, b, r, batch_alive.len, alive.len);
        going = c.more;
        /* the digests _retain will look up: live records at or below the latest offset */
        Py_ssize_t rr = r;
        for (int64_t j = 0; j < c.nent; j++) {
            const Entry *e = &c.entries[j];
            int live = batch_bits[b + j];
            for (int64_t k = 0; k < e->count; k++) {
                Rec *rec = &c.recs[e->rec0 + k];
                rec->need = live && alive_bits[rr + k] && rec->key != NULL
                            && (legacy_rules || rec->offset <= latest);
            }
            rr += (Py_ssize_t)e->count;
        }
        md5_many(&c);
        for (int64_t j = 0; j < PREFETCH_AHEAD; j++) {
            prefetch_entry(m, &c, j);
        }
        for (int64_t j = 0; j < c.nent; j++) {
            const Entry *e = &c.entries[j];
            prefetch_entry(m, &c, j + PREFETCH_AHEAD);
            if (batch_bits[b]) {
                const Rec *recs = &c.recs[e->rec0];
                int64_t live = 0, weight_all = 0, weight_live = 0, weight_kept = 0, kept = 0;
                for (int64_t k = 0; k < e->count; k++) {
                    int64_t weight = record_weight(&recs[k]);
                    weight_all += weight;
                    if (alive_bits[r + k]) {
                        live++;
                        weight_live += weight;
                    }
                }
                int64_t current;
                if (live == e->count) {
                    current = e->size;
                }
                else if (live == 0) {
                    current = e->magic == 2 ? RECORD_BATCH_OVERHEAD : 0;
                }
                else if (e->magic < 2) {
                    current = e->size;
                }
                else {
                    current = RECORD_BATCH_OVERHEAD
                              + (e->size - RECORD_BATCH_OVERHEAD) * weight_live
                                    / (weight_all ? weight_all : 1);
                }
                start_bytes += current;
                if (e->magic == 2 && !legacy_rules) {
                    if (!txn_seen || e->last_offset > txn_max) {
                        txn_max = e->last_offset;
                    }
                    txn_seen = 1;
                }
                start_records += shallow ? (live ? 1 : 0) : live;
                for (int64_t k = 0; k < e->count; k++) {
                    const Rec *rec = &recs[k];
                    if (!alive_bits[r + k]) {
                        continue;
                    }
                    int keep;
                    if (!legacy_rules && rec->offset > latest) {
                        keep = 1; /* pastLatestOffset */
                    }
                    else if (rec->key == NULL) {
                        invalid++;
                        keep = 0;
                    }
                    else {
                        int64_t found = map_get(m, rec->digest);
                        if (legacy_rules ? (found >= 0 && rec->offset < found)
                                         : rec->offset < found) {
                            keep = 0;
                        }
                        else if (rec->value == NULL && !retain_deletes) {
                            tombstones_dropped++;
                            keep = 0;
                        }
                        else {
                            keep = 1;
                        }
                    }
                    if (keep) {
                        kept++;
                        weight_kept += record_weight(rec);
                        if (rec->value == NULL) {
                            tombstones_kept++;
                        }
                    }
                    else {
                        alive_bits[r + k] = 0;
                    }
                }
                if (kept) {
                    end_records += shallow ? 1 : kept;
                    int64_t size;
                    if (kept == live || e->magic < 2) {
                        size = current;
                    }
                    else {
                        size = RECORD_BATCH_OVERHEAD + (current - RECORD_BATCH_OVERHEAD)
                                                           * weight_kept
                                                           / (weight_live ? weight_live : 1);
                        inexact = 1;
                    }
                    end_bytes += size;
                    size_total += size;
                }
                else {
                    batch_bits[b] = 0;
                }
            }
            b += 1;
            r += (Py_ssize_t)e->count;
            pos = e->pos + (Py_ssize_t)e->n;
        }
    }
done:
    chunk_free(&c);
    PyBuffer_Release(&w.window);
    PyBuffer_Release(&alive);
    PyBuffer_Release(&batch_alive);
    if (failed) {
        return NULL;
    }
    return Py_BuildValue("(nnnLLLLiLLLLiL)", pos, b, r, start_records, start_bytes, end_records,
                         end_bytes, inexact, tombstones_kept, tombstones_dropped, invalid,
                         size_total, txn_seen, txn_max);
}

/* needed_window(window, start, end, keys, low, high, ordinal)
 *   -> (next_rel, ordinal, last_added, last_new)
 * requirements.needed_entries over the original log: every keyed record with low <= offset <
 * high of a non-control batch is numbered (`ordinal` counts them across calls) and, if its
 * digest is of the set's part, goes into `keys`; `last_added` is the number of the last one
 * that did (-1: none), `last_new` whether it was new. It stops once the set has overflowed (the
 * sweep is then abandoned and redone with more parts). */
static PyObject *
needed_window(PyObject *module, PyObject *args)
{
    Window w;
    DigestSetObject *keys;
    long long low, high, ordinal;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nnO!LLL:needed_window", &w.window, &w.start, &w.end,
                          &DigestSetType, &keys, &low, &high, &ordinal)) {
        return NULL;
    }
    const unsigned char *p = w.window.buf;
    Chunk c = {0};
    long long last_added = -1;
    int last_new = 0, failed = 0, going = 1;
    Py_ssize_t pos = w.start;
    if (window_check(&w) < 0) {
        failed = 1;
        goto done;
    }
    if (keys->overflowed) {
        goto done; /* nothing taken: the caller stops the sweep */
    }
    while (going) {
        if (read_chunk(p, pos, w.end, &c) < 0) {
            failed = 1;
            break;
        }
        going = c.more;
        for (int64_t i = 0; i < c.nrec; i++) {
            Rec *rec = &c.recs[i];
            rec->need = rec->key != NULL && rec->offset >= low && rec->offset < high;
        }
        md5_many(&c);
        for (int64_t i = 0; i < c.nrec; i++) {
            const Rec *rec = &c.recs[i];
            if (!rec->need) {
                continue;
            }
            long long number = ordinal++;
            if (!set_member(keys, rec->digest)) {
                continue;
            }
            int fresh = set_add(keys, rec->digest);
            if (fresh < 0) {
                failed = 1;
                goto done;
            }
            last_added = number;
            last_new = fresh;
        }
        if (c.nent > 0) {
            const Entry *e = &c.entries[c.nent - 1];
            pos = e->pos + (Py_ssize_t)e->n;
        }
        if (keys->overflowed) {
            break;
        }
    }
done:
    chunk_free(&c);
    PyBuffer_Release(&w.window);
    if (failed) {
        return NULL;
    }
    return Py_BuildValue("(nLLi)", pos, ordinal, last_added, last_new);
}

static PyObject *
md5(PyObject *module, PyObject *arg)
{
    (void)module;
    unsigned char hash[HASH_SIZE];
    if (digest_arg(arg, hash) < 0) {
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)hash, HASH_SIZE);
}

/* md5_many(keys) -> [digest]: the batched (SIMD) MD5 the window functions use. */
static PyObject *
md5_many_py(PyObject *module, PyObject *arg)
{
    (void)module;
    PyObject *seq = PySequence_Fast(arg, "md5_many takes a sequence of bytes");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Chunk c = {0};
    PyObject *result = NULL;
    if (n > 0 && chunk_reserve(&c, n) < 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        char *data;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(seq, i), &data, &len) < 0) {
            goto done;
        }
        Rec *r = &c.recs[i];
        r->key = (const unsigned char *)data;
        r->key_len = len;
        r->need = 1;
    }
    c.nrec = n;
    md5_many(&c);
    result = PyList_New(n);
    if (result == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *digest = PyBytes_FromStringAndSize((const char *)c.recs[i].digest, HASH_SIZE);
        if (digest == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, digest);
    }
done:
    chunk_free(&c);
    Py_DECREF(seq);
    return result;
}

/* _simd(width) -> the previous width: 16 (AVX-512), 8 (AVX2) or 1 (scalar), for tests; a width
 * the CPU lacks is refused. 0 only reads it. */
static PyObject *
simd_py(PyObject *module, PyObject *arg)
{
    (void)module;
    long want = PyLong_AsLong(arg);
    if (want == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int before = simd_width;
    if (want != 0) {
        if (!(want == 1 || (want == 8 && have_avx2) || (want == 16 && have_avx512))) {
            PyErr_SetString(PyExc_ValueError, "this CPU has no such SIMD width");
            return NULL;
        }
        simd_width = (int)want;
    }
    return PyLong_FromLong(before);
}

/* _crc(data, castagnoli) -> the CRC-32 (zlib) or CRC-32C the entry checks use; for tests. */
static PyObject *
crc_py(PyObject *module, PyObject *args)
{
    Py_buffer data;
    int castagnoli;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*p:_crc", &data, &castagnoli)) {
        return NULL;
    }
    uint32_t crc =
        castagnoli ? crc32_castagnoli(data.buf, data.len) : crc32_zlib(data.buf, data.len);
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLong(crc);
}

static PyMethodDef methods[] = {
    {"_crc", crc_py, METH_VARARGS, "_crc(data, castagnoli) -> CRC-32 or CRC-32C (tests)."},
    {"_simd", simd_py, METH_O, "_simd(width) -> previous width (tests: 16, 8 or 1; 0 reads)."},
    {"md5", md5, METH_O, "md5(data) -> the 16-byte MD5 digest (RFC 1321)."},
    {"md5_many", md5_many_py, METH_O,
     "md5_many(keys) -> [digest]: MD5 of each key, several at once (SIMD when available)."},
    {"scan_window", scan_window, METH_VARARGS,
     "scan_window(window, start, end, writers, first_ts, largest, last)\n"
     "-> (next_rel, batches, records, first_ts, largest, last)"},
    {"map_window", map_window, METH_VARARGS,
     "map_window(window, start, end, map, alive, batch_alive, batch, record, mode,\n"
     "start_offset, max_desired) -> (next_rel, batch, record, status, seen, last, txn_seen,\n"
     "txn_max)"},
    {"clean_window", clean_window, METH_VARARGS,
     "clean_window(window, start, end, map, alive, batch_alive, batch, record, legacy_rules,\n"
     "shallow, retain_deletes) -> (next_rel, batch, record, start_records, start_bytes,\n"
     "end_records, end_bytes, inexact, tombstones_kept, tombstones_dropped, invalid_dropped,\n"
     "size, txn_seen, txn_max)"},
    {"needed_window", needed_window, METH_VARARGS,
     "needed_window(window, start, end, keys, low, high, ordinal)\n"
     "-> (next_rel, ordinal, last_added, last_new)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "offsets_auditor._cleaner_speedups",
    "C path of the log-cleaner emulation (see offsets_auditor.cleaner.fast).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__cleaner_speedups(void)
{
    kafka_crc_init();
#ifdef HAVE_SSE42_CRC32C
    have_avx512 = __builtin_cpu_supports("avx512f");
    have_avx2 = __builtin_cpu_supports("avx2");
    simd_width = have_avx512 ? 16 : (have_avx2 ? 8 : 1);
#endif
    if (PyType_Ready(&OffsetMapType) < 0 || PyType_Ready(&DigestSetType) < 0
        || PyType_Ready(&WriterTableType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "SkimpyOffsetMap", (PyObject *)&OffsetMapType) < 0
        || PyModule_AddObjectRef(module, "DigestSet", (PyObject *)&DigestSetType) < 0
        || PyModule_AddObjectRef(module, "WriterTable", (PyObject *)&WriterTableType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
