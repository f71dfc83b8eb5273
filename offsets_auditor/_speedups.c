/*
 * offsets_auditor._speedups: the C fast lane of the segment summary (optional extension).
 *
 * One function, scan_offset_commits(window, start, end, file_position) -> (next_rel, totals),
 * the FastLane contract of offsets_auditor/records/log_file.py. From window offset `start` it
 * consumes consecutive WHOLE entries of window[start:end] that are either
 *
 *   - magic 0/1 plain messages (codec none): Kafka 0.9.0.1 Message.scala / 3.8 LegacyRecord.java
 *       offset:int64 size:int32 crc:uint32 magic:int8 attributes:int8 [timestamp:int64 if magic 1]
 *       key_length:int32 key value_length:int32 value        (CRC-32 over magic..end)
 *   - magic 2 uncompressed, non-control record batches: DefaultRecordBatch.java
 *       baseOffset:int64 length:int32 partitionLeaderEpoch:int32 magic:int8 crc:uint32
 *       attributes:int16 lastOffsetDelta:int32 baseTimestamp:int64 maxTimestamp:int64
 *       producerId:int64 producerEpoch:int16 baseSequence:int32 recordsCount:int32 records
 *       (CRC-32C over attributes..end); record = length:varint attributes:int8
 *       timestampDelta:varlong offsetDelta:varint keyLength:varint key valueLength:varint value
 *       headersCount:varint (keyLength:varint key valueLength:varint value)*
 *
 * whose CRC is valid, whose framing is exactly what the Python decoder accepts
 * (offsets_auditor/records/legacy.py, default.py, varint.py), and whose every record is an
 * OffsetCommitKey v0/v1 (int16 version, string group, string topic, int32 partition, nothing
 * after) with a null value (tombstone) or an OffsetCommitValue v0-v3 whose fields all fit
 * (trailing bytes after a value are allowed; offsets_auditor/schemas/classic.py).
 *
 * At the first entry that is anything else it stops and returns that entry's window offset: the
 * Python decoder takes it from there. This code never reports a problem, never reads outside
 * window[start:end] whatever the bytes say, and allocates nothing proportional to any length.
 *
 * The totals dict carries the SegmentTotals fields (offsets_auditor/summary.py) for what was
 * consumed: batches, records, tombstones, transactional_records, valid_bytes, first_offset,
 * last_offset, records_by_key, values_by_version, codecs, magics.
 *
 * A second function, render_offset_commits(window, start, end, file_position) -> (next_rel,
 * text), is the text lane of `dump` (offsets_auditor/render.py segment_text): it takes the same
 * entries with the same checks (the code below is shared), except that an entry is also refused
 * when a group, topic or metadata string is not printable ASCII or holds ' or \ (there Python's
 * repr() is not simply '...'), and returns the exact lines record_to_text prints for them, each
 * ending with "\n".
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SSE42_CRC32C 1
#include <nmmintrin.h>
#endif

/* ------------------------------- CRCs, big-endian reads, varints -- */

#include "_kafka_wire.h"

/* ------------------------------------------------------------------ the counts -- */

typedef struct {
    long long batches;
    long long records;
    long long tombstones;
    long long transactional_records;
    long long magics[3];
    long long by_key[2];       /* offset_commit/v0, offset_commit/v1 */
    long long by_value[2][4];  /* [key version][value version] */
    int64_t first_offset;
    int64_t last_offset;
} Totals;

/* ------------------------------------------------ __consumer_offsets key / value -- */

/* Key version (0 or 1) of a valid OffsetCommitKey, else -1. Every byte must be used. */
static int
offset_commit_key(const unsigned char *p, int64_t n)
{
    if (n < 2) {
        return -1;
    }
    int version = be16(p);
    if (version != 0 && version != 1) {
        return -1;
    }
    int64_t at = 2;
    for (int s = 0; s < 2; s++) { /* group, topic: int16 length >= 0, then the bytes */
        if (n - at < 2) {
            return -1;
        }
        int64_t len = be16(p + at);
        at += 2;
        if (len < 0 || n - at < len) {
            return -1;
        }
        at += len;
    }
    if (n - at != 4) { /* partition, and nothing after it */
        return -1;
    }
    return version;
}

/* Value version (0..3) of an OffsetCommitValue whose fields all fit, else -1. */
static int
offset_commit_value(const unsigned char *p, int64_t n)
{
    if (n < 2) {
        return -1;
    }
    int version = be16(p);
    if (version < 0 || version > 3) {
        return -1;
    }
    int64_t at = 2 + 8; /* offset */
    if (version == 3) {
        at += 4; /* leader_epoch */
    }
    if (n - at < 2) {
        return -1;
    }
    int64_t len = be16(p + at); /* metadata: non-nullable string */
    at += 2;
    if (len < 0 || n - at < len) {
        return -1;
    }
    at += len + 8; /* commit_timestamp */
    if (version == 1) {
        at += 8; /* expire_timestamp */
    }
    return at <= n ? version : -1;
}

/* Count one record; 0 if its key or value is not an offset commit we take. */
static int
count_record(Totals *t, const unsigned char *key, int64_t key_len, const unsigned char *value,
             int64_t value_len, int is_null_value)
{
    int kv = offset_commit_key(key, key_len);
    if (kv < 0) {
        return 0;
    }
    if (is_null_value) {
        t->tombstones++;
    }
    else {
        int vv = offset_commit_value(value, value_len);
        if (vv < 0) {
            return 0;
        }
        t->by_value[kv][vv]++;
    }
    t->by_key[kv]++;
    return 1;
}

static inline void
count_offset(Totals *t, int64_t offset)
{
    if (t->records == 0) {
        t->first_offset = offset;
    }
    t->last_offset = offset;
    t->records++;
}

/* ------------------------------------------------------------- the text lane -- */

/* render_offset_commits writes, for each record taken, the line render.record_to_text /
 * segment_text print for it. The lines only hold ASCII: group, topic and metadata must be
 * printable ASCII without ' or \ (so Python's repr of them is '...'), else the entry is refused. */
typedef struct {
    char *buf;
    size_t len;
    size_t cap;
    int nomem;
} Text;

static int
text_reserve(Text *o, size_t more)
{
    if (o->cap - o->len >= more) {
        return 1;
    }
    size_t cap = o->cap ? o->cap : (size_t)1 << 16;
    while (cap - o->len < more) {
        cap *= 2;
    }
    char *grown = (char *)PyMem_RawRealloc(o->buf, cap);
    if (grown == NULL) {
        o->nomem = 1;
        return 0;
    }
    o->buf = grown;
    o->cap = cap;
    return 1;
}

static inline char *
put(char *w, const char *s, size_t n)
{
    memcpy(w, s, n);
    return w + n;
}

#define PUT_LITERAL(w, s) put((w), (s), sizeof(s) - 1)

/* str(int) of a 64-bit integer. */
static inline char *
put_int(char *w, int64_t value)
{
    char digits[24];
    int n = 0;
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    do {
        digits[n++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0) {
        *w++ = '-';
    }
    while (n) {
        *w++ = digits[--n];
    }
    return w;
}

/* 1 if repr() of p[0:n] decoded as UTF-8 is just '...' around the same bytes. */
static inline int
plain_ascii(const unsigned char *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c < 0x20 || c > 0x7E || c == '\'' || c == '\\') {
            return 0;
        }
    }
    return 1;
}

/* How a record is shown before its key: timestamp name (NULL: none shown) and the rest. */
typedef struct {
    int64_t position;
    int magic;
    const char *timestamp_name;
    size_t timestamp_name_len;
    int64_t timestamp;
    int transactional;
    int64_t producer_id;
} LineHead;

/* Append the line of one record whose key and value count_record accepted; 0 if its strings
 * are not plain ASCII (or memory ran out: o->nomem). */
static int
render_record(Text *o, const LineHead *h, int64_t offset, const unsigned char *key,
              int64_t key_len, const unsigned char *value, int64_t value_len, int is_null)
{
    (void)value_len; /* count_record checked that every field fits */
    int key_version = be16(key);
    int64_t group_len = be16(key + 2);
    const unsigned char *group = key + 4;
    int64_t topic_len = be16(key + 4 + group_len);
    const unsigned char *topic = key + 6 + group_len;
    int32_t partition = be32(key + key_len - 4);
    if (!plain_ascii(group, group_len) || !plain_ascii(topic, topic_len)) {
        return 0;
    }
    int value_version = 0;
    int64_t committed = 0, leader_epoch = 0, commit_timestamp = 0, expire_timestamp = 0;
    int64_t metadata_len = 0;
    const unsigned char *metadata = NULL;
    if (!is_null) {
        value_version = be16(value);
        committed = be64(value + 2);
        int64_t at = 10;
        if (value_version == 3) {
            leader_epoch = be32(value + 10);
            at = 14;
        }
        metadata_len = be16(value + at);
        metadata = value + at + 2;
        at += 2 + metadata_len;
        commit_timestamp = be64(value + at);
        if (value_version == 1) {
            expire_timestamp = be64(value + at + 8);
        }
        if (!plain_ascii(metadata, metadata_len)) {
            return 0;
        }
    }
    if (!text_reserve(o, 640 + (size_t)key_len + (size_t)metadata_len)) {
        return 0;
    }
    char *w = o->buf + o->len;
    w = PUT_LITERAL(w, "offset: ");
    w = put_int(w, offset);
    w = PUT_LITERAL(w, " position: ");
    w = put_int(w, h->position);
    w = PUT_LITERAL(w, " magic: ");
    *w++ = (char)('0' + h->magic);
    w = PUT_LITERAL(w, " codec: none");
    if (h->timestamp_name != NULL && h->timestamp >= 0) {
        *w++ = ' ';
        w = put(w, h->timestamp_name, h->timestamp_name_len);
        w = PUT_LITERAL(w, ": ");
        w = put_int(w, h->timestamp);
    }
    if (h->transactional) {
        w = PUT_LITERAL(w, " transactional producerId: ");
        w = put_int(w, h->producer_id);
    }
    w = PUT_LITERAL(w, " key: offset_commit/v");
    *w++ = (char)('0' + key_version);
    w = PUT_LITERAL(w, " group='");
    w = put(w, (const char *)group, (size_t)group_len);
    w = PUT_LITERAL(w, "' topic='");
    w = put(w, (const char *)topic, (size_t)topic_len);
    w = PUT_LITERAL(w, "' partition=");
    w = put_int(w, partition);
    if (is_null) {
        w = PUT_LITERAL(w, " value: <tombstone>\n");
    }
    else {
        w = PUT_LITERAL(w, " value: v");
        *w++ = (char)('0' + value_version);
        w = PUT_LITERAL(w, " offset=");
        w = put_int(w, committed);
        if (value_version == 3) {
            w = PUT_LITERAL(w, " leader_epoch=");
            w = put_int(w, leader_epoch);
        }
        w = PUT_LITERAL(w, " metadata='");
        w = put(w, (const char *)metadata, (size_t)metadata_len);
        w = PUT_LITERAL(w, "' commit_timestamp=");
        w = put_int(w, commit_timestamp);
        if (value_version == 1) {
            w = PUT_LITERAL(w, " expire_timestamp=");
            w = put_int(w, expire_timestamp);
        }
        *w++ = '\n';
    }
    o->len = (size_t)(w - o->buf);
    return 1;
}

/* ------------------------------------------------------------- legacy message -- */

/* Take the whole legacy entry p[0:n] (n = 12 + size, size >= 14 checked); 1 if taken. With
 * `out`, also append its line (the entry is at file position `position`). */
static int
legacy_entry(Totals *t, Text *out, int64_t position, const unsigned char *p, int64_t n)
{
    int magic = p[16];
    int attributes = p[17];
    if ((attributes & 0x07) != 0) {
        return 0; /* compressed: the Python decoder's */
    }
    if (n - 12 < (magic == 1 ? 22 : 14)) {
        return 0;
    }
    if (crc32_zlib(p + 16, (Py_ssize_t)(n - 16)) != be32u(p + 12)) {
        return 0;
    }
    int64_t at = magic == 1 ? 26 : 18;
    int64_t key_len = be32(p + at); /* room for both lengths: size >= overhead */
    at += 4;
    if (key_len < 0 || n - at < key_len) {
        return 0; /* a null key, a negative length, or a key past the message */
    }
    const unsigned char *key = p + at;
    at += key_len;
    if (n - at < 4) {
        return 0;
    }
    int64_t value_len = be32(p + at);
    at += 4;
    int is_null = 0;
    if (value_len == -1) {
        is_null = 1;
        value_len = 0;
    }
    else if (value_len < 0 || n - at < value_len) {
        return 0;
    }
    const unsigned char *value = p + at;
    if (at + value_len != n) {
        return 0; /* bytes left after the value */
    }
    Totals saved = *t;
    if (!count_record(t, key, key_len, value, value_len, is_null)) {
        *t = saved;
        return 0;
    }
    if (out != NULL) {
        LineHead head = {position, magic, NULL, 0, -1, 0, 0};
        if (magic == 1) {
            head.timestamp = be64(p + 18);
            if (attributes & 0x08) {
                head.timestamp_name = "LogAppendTime";
                head.timestamp_name_len = 13;
            }
            else {
                head.timestamp_name = "CreateTime";
                head.timestamp_name_len = 10;
            }
        }
        if (!render_record(out, &head, be64(p), key, key_len, value, value_len, is_null)) {
            *t = saved;
            return 0;
        }
    }
    count_offset(t, be64(p));
    t->batches++;
    t->magics[magic]++;
    return 1;
}

/* -------------------------------------------------------------- v2 record batch -- */

/* Take the whole v2 batch p[0:n] (n = 12 + length); 1 if taken. With `out`, also append the
 * lines of its records (the batch is at file position `position`). */
static int
default_batch(Totals *t, Text *out, int64_t position, const unsigned char *p, int64_t n)
{
    if (n < 61) {
        return 0;
    }
    int attributes = be16(p + 21);
    if ((attributes & 0x07) != 0 || (attributes & 0x20) != 0) {
        return 0; /* compressed or control */
    }
    if (crc32_castagnoli(p + 21, (Py_ssize_t)(n - 21)) != be32u(p + 17)) {
        return 0;
    }
    int64_t base_offset = be64(p);
    int64_t count = be32(p + 57);
    int64_t at = 61;
    if (count < 0 || count > n - at) {
        return 0;
    }
    Totals saved = *t;
    size_t saved_len = out != NULL ? out->len : 0;
    int log_append_time = (attributes & 0x08) != 0;
    int64_t base_timestamp = be64(p + 27);
    LineHead head = {position,
                     2,
                     log_append_time ? "LogAppendTime" : "CreateTime",
                     log_append_time ? 13 : 10,
                     be64(p + 35), /* maxTimestamp: every record's timestamp if LogAppendTime */
                     (attributes & 0x10) != 0,
                     be64(p + 43)};
    for (int64_t index = 0; index < count; index++) {
        int64_t length, timestamp_delta, offset_delta, key_len, value_len, headers;
        if (!read_varint(p, &at, n, 5, &length)) {
            goto refuse;
        }
        int64_t record_end = at + length;
        if (length < 0 || record_end > n) {
            goto refuse;
        }
        at += 1; /* attributes */
        if (!read_varint(p, &at, record_end, 10, &timestamp_delta)
            || !read_varint(p, &at, record_end, 5, &offset_delta)
            || !read_varint(p, &at, record_end, 5, &key_len)) {
            goto refuse;
        }
        if (key_len < 0 || key_len > record_end - at) {
            goto refuse; /* null key, or past the record */
        }
        const unsigned char *key = p + at;
        at += key_len;
        if (!read_varint(p, &at, record_end, 5, &value_len)) {
            goto refuse;
        }
        int is_null = value_len < 0; /* any negative length reads as null */
        const unsigned char *value = p + at;
        if (is_null) {
            value_len = 0;
        }
        else if (value_len > record_end - at) {
            goto refuse;
        }
        at += value_len;
        if (!read_varint(p, &at, record_end, 5, &headers)) {
            goto refuse;
        }
        if (headers < 0 || headers > record_end - at) {
            goto refuse;
        }
        for (int64_t h = 0; h < headers; h++) {
            int64_t hk, hv;
            if (!read_varint(p, &at, record_end, 5, &hk) || hk < 0 || hk > record_end - at) {
                goto refuse;
            }
            at += hk;
            if (!read_varint(p, &at, record_end, 5, &hv)) {
                goto refuse;
            }
            if (hv > 0) {
                if (hv > record_end - at) {
                    goto refuse;
                }
                at += hv;
            }
        }
        if (at != record_end) {
            goto refuse;
        }
        if ((offset_delta > 0 && base_offset > INT64_MAX - offset_delta)
            || (offset_delta < 0 && base_offset < INT64_MIN - offset_delta)) {
            goto refuse; /* Python's ints do not overflow; let it say what it makes of it */
        }
        int64_t offset = base_offset + offset_delta;
        if (!count_record(t, key, key_len, value, value_len, is_null)) {
            goto refuse;
        }
        if (out != NULL) {
            if (!log_append_time) {
                if ((timestamp_delta > 0 && base_timestamp > INT64_MAX - timestamp_delta)
                    || (timestamp_delta < 0 && base_timestamp < INT64_MIN - timestamp_delta)) {
                    goto refuse; /* as for the offset */
                }
                head.timestamp = base_timestamp + timestamp_delta;
            }
            if (!render_record(out, &head, offset, key, key_len, value, value_len, is_null)) {
                goto refuse;
            }
        }
        count_offset(t, offset);
        if (attributes & 0x10) {
            t->transactional_records++;
        }
    }
    if (at != n) {
        goto refuse;
    }
    t->batches++;
    t->magics[2]++;
    return 1;
refuse:
    *t = saved;
    if (out != NULL) {
        out->len = saved_len;
    }
    return 0;
}

/* ---------------------------------------------------------------- the function -- */

static int
set_int(PyObject *dict, const char *name, long long value)
{
    PyObject *number = PyLong_FromLongLong(value);
    if (number == NULL) {
        return -1;
    }
    int rc = PyDict_SetItemString(dict, name, number);
    Py_DECREF(number);
    return rc;
}

static int
set_counts(PyObject *dict, const char *name, const char *const *keys, const long long *counts,
           int n)
{
    PyObject *sub = PyDict_New();
    if (sub == NULL) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (counts[i] != 0 && set_int(sub, keys[i], counts[i]) < 0) {
            Py_DECREF(sub);
            return -1;
        }
    }
    int rc = PyDict_SetItemString(dict, name, sub);
    Py_DECREF(sub);
    return rc;
}

static const char *const KEY_NAMES[2] = {"offset_commit/v0", "offset_commit/v1"};
static const char *const VALUE_NAMES[8] = {
    "offset_commit/v0:v0", "offset_commit/v0:v1", "offset_commit/v0:v2", "offset_commit/v0:v3",
    "offset_commit/v1:v0", "offset_commit/v1:v1", "offset_commit/v1:v2", "offset_commit/v1:v3",
};
static const char *const CODEC_NAMES[1] = {"none"};
static const char *const MAGIC_NAMES[3] = {"0", "1", "2"};

static PyObject *
totals_dict(const Totals *t, long long valid_bytes)
{
    PyObject *dict = PyDict_New();
    if (dict == NULL) {
        return NULL;
    }
    long long values[8];
    for (int k = 0; k < 2; k++) {
        for (int v = 0; v < 4; v++) {
            values[k * 4 + v] = t->by_value[k][v];
        }
    }
    if (set_int(dict, "batches", t->batches) < 0 || set_int(dict, "records", t->records) < 0
        || set_int(dict, "tombstones", t->tombstones) < 0
        || set_int(dict, "transactional_records", t->transactional_records) < 0
        || set_int(dict, "valid_bytes", valid_bytes) < 0) {
        goto error;
    }
    if (t->records) {
        if (set_int(dict, "first_offset", t->first_offset) < 0
            || set_int(dict, "last_offset", t->last_offset) < 0) {
            goto error;
        }
    }
    else if (PyDict_SetItemString(dict, "first_offset", Py_None) < 0
             || PyDict_SetItemString(dict, "last_offset", Py_None) < 0) {
        goto error;
    }
    if (set_counts(dict, "records_by_key", KEY_NAMES, t->by_key, 2) < 0
        || set_counts(dict, "values_by_version", VALUE_NAMES, values, 8) < 0
        || set_counts(dict, "codecs", CODEC_NAMES, &t->batches, 1) < 0
        || set_counts(dict, "magics", MAGIC_NAMES, t->magics, 3) < 0) {
        goto error;
    }
    return dict;
error:
    Py_DECREF(dict);
    return NULL;
}

/* Scan p[start:end] (p[start] is at file position `file_position`); returns the offset of the
 * first entry not taken. With `out`, the lines of what was taken are appended to it. */
static Py_ssize_t
scan(Totals *t, Text *out, const unsigned char *p, Py_ssize_t start, Py_ssize_t end,
     int64_t file_position)
{
    Py_ssize_t pos = start;
    while (end - pos > 17) { /* more than HEADER_SIZE_UP_TO_MAGIC left */
        int64_t size = be32(p + pos + 8);
        if (size < 14) {
            break;
        }
        int64_t n = 12 + size;
        if (n > end - pos) {
            break; /* not whole in the window: the Python decoder frames it */
        }
        int magic = p[pos + 16];
        int64_t position = file_position + (int64_t)(pos - start);
        int taken;
        if (magic == 2) {
            taken = default_batch(t, out, position, p + pos, n);
        }
        else if (magic == 0 || magic == 1) {
            taken = legacy_entry(t, out, position, p + pos, n);
        }
        else {
            taken = 0;
        }
        if (!taken) {
            break;
        }
        pos += (Py_ssize_t)n;
    }
    return pos;
}

static PyObject *
scan_offset_commits(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    long long file_position;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nnL:scan_offset_commits", &view, &start, &end,
                          &file_position)) {
        return NULL;
    }
    if (end > view.len) {
        end = view.len;
    }
    if (start < 0 || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start must be within the window, before end");
        return NULL;
    }
    Totals t;
    memset(&t, 0, sizeof t);
    Py_ssize_t next;
    Py_BEGIN_ALLOW_THREADS
    next = scan(&t, NULL, (const unsigned char *)view.buf, start, end, (int64_t)file_position);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *totals = totals_dict(&t, file_position + (long long)(next - start));
    if (totals == NULL) {
        return NULL;
    }
    return Py_BuildValue("(nN)", next, totals);
}

static PyObject *
render_offset_commits(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    long long file_position;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nnL:render_offset_commits", &view, &start, &end,
                          &file_position)) {
        return NULL;
    }
    if (end > view.len) {
        end = view.len;
    }
    if (start < 0 || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start must be within the window, before end");
        return NULL;
    }
    Totals t;
    memset(&t, 0, sizeof t);
    Text out = {NULL, 0, 0, 0};
    Py_ssize_t next;
    Py_BEGIN_ALLOW_THREADS
    next = scan(&t, &out, (const unsigned char *)view.buf, start, end, (int64_t)file_position);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (out.nomem) {
        PyMem_RawFree(out.buf);
        return PyErr_NoMemory();
    }
    PyObject *text = PyUnicode_New((Py_ssize_t)out.len, 127);
    if (text == NULL) {
        PyMem_RawFree(out.buf);
        return NULL;
    }
    if (out.len) {
        memcpy(PyUnicode_1BYTE_DATA(text), out.buf, out.len);
    }
    PyMem_RawFree(out.buf);
    return Py_BuildValue("(nN)", next, text);
}

static PyMethodDef methods[] = {
    {"scan_offset_commits", scan_offset_commits, METH_VARARGS,
     "scan_offset_commits(window, start, end, file_position) -> (next_rel, totals)\n\n"
     "Consume the whole plain offset-commit entries of window[start:end] (see\n"
     "offsets_auditor.records.log_file.FastLane); return the window offset of the first\n"
     "entry not taken and the SegmentTotals fields for what was taken."},
    {"render_offset_commits", render_offset_commits, METH_VARARGS,
     "render_offset_commits(window, start, end, file_position) -> (next_rel, text)\n\n"
     "Consume the entries of window[start:end] scan_offset_commits would take whose group,\n"
     "topic and metadata strings are printable ASCII without ' or \\; return the window\n"
     "offset of the first entry not taken and the dump's text lines of what was taken, each\n"
     "ending with a newline (\"\" when nothing was taken)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "offsets_auditor._speedups",
    "C fast lane of the segment summary (see offsets_auditor.fastlane).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    kafka_crc_init();
    return PyModule_Create(&module_def);
}
