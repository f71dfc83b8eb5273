/*
 * offsets_auditor._native: the C record reader and the two interning tables the rules use.
 *
 * Reader turns whole entries of a window of a .log segment into the columns of
 * offsets_auditor/reader/columns.py (RecordColumns, BatchColumns); Python reads them as numpy
 * arrays without copying. One parser per format, each the twin of a reference decoder in
 * offsets_auditor/records/ (the tests compare both on every fixture and under fuzzing):
 *
 *   legacy entries (magic 0/1), Kafka 0.9.0.1 Message.scala / 3.8 LegacyRecord.java
 *       offset:int64 size:int32 crc:uint32 magic:int8 attributes:int8 [timestamp:int64 if v1]
 *       key_length:int32 key value_length:int32 value            CRC-32 over magic..end
 *     (records/legacy.py); a compressed wrapper's decompressed value is the same framing again,
 *     parsed by the same function (parse_legacy_message).
 *   v2 record batches (magic 2), DefaultRecordBatch.java / DefaultRecord.java
 *       61-byte header (BATCH_* below), then recordsCount records:
 *       length:varint attributes:int8 timestampDelta:varlong offsetDelta:varint
 *       keyLength:varint key valueLength:varint value headersCount:varint
 *       (headerKeyLength:varint headerKey headerValueLength:varint headerValue)*
 *                                                                 CRC-32C over attributes..end
 *     (records/default.py); a compressed batch's decompressed records section is parsed by the
 *     same function (parse_v2_records).
 *
 * Keys and values are classified by classify_key / classify_value, the twins of
 * offsets_auditor/reader/classify.py: OffsetCommitKey v0/v1, GroupMetadataKey v2 and
 * OffsetCommitValue v0-v3 are decoded into columns, every other key or value is left DEFERRED for
 * the Python schema decoders. Control records are decoded as records/control.py does.
 *
 * What the reader does not take it leaves to Python: an entry it cannot frame normally in the
 * window, or whose CRC, framing or records are not exactly what the reference decoders accept,
 * stops it (status STOP) and the reference decoders report what is wrong. Compressed entries stop
 * it with status COMPRESSED: Python decompresses (records/compression.py, the one
 * implementation of the codecs) and hands the bytes back (take_compressed).
 *
 * Memory: a chunk holds at most max_records records (the columns grow to that, no further); an
 * entry with more records than that is validated first, then emitted over several chunks
 * (status SPLIT). Nothing is allocated in proportion to a count read from the input. Every read
 * is bounds-checked against the window or payload it belongs to.
 *
 * StringTable interns raw byte strings (group ids, topics) to dense ids in first-seen order;
 * KeyTable interns 16-byte key digests to dense ids (the offset map's keys, for the cleaner
 * rules in Python). Both are plain hash tables with linear probing.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_kafka_wire.h"
#include "_md5.h"

/* ------------------------------------------------------------ layouts, Kafka's names -- */

/* Every entry starts with the log overhead (Records.LOG_OVERHEAD). */
#define LOG_OFFSET_OFFSET 0 /* offset / baseOffset: int64 */
#define LOG_SIZE_OFFSET 8   /* size / length: int32, bytes after this field */
#define LOG_OVERHEAD 12
#define HEADER_SIZE_UP_TO_MAGIC 17
#define MIN_ENTRY_SIZE 14 /* LegacyRecord.RECORD_OVERHEAD_V0 */

/* Legacy message, offsets from the start of the message (after the log overhead). */
#define LEGACY_CRC_OFFSET 0
#define LEGACY_MAGIC_OFFSET 4
#define LEGACY_ATTRIBUTES_OFFSET 5
#define LEGACY_TIMESTAMP_OFFSET 6    /* magic 1 only */
#define LEGACY_KEY_LENGTH_OFFSET_V0 6
#define LEGACY_KEY_LENGTH_OFFSET_V1 14
#define RECORD_OVERHEAD_V0 14
#define RECORD_OVERHEAD_V1 22
#define LEGACY_CODEC_MASK 0x07
#define LEGACY_TIMESTAMP_TYPE_MASK 0x08

/* DefaultRecordBatch header, offsets from the start of the batch. */
#define BATCH_BASE_OFFSET_OFFSET 0
#define BATCH_LENGTH_OFFSET 8
#define BATCH_PARTITION_LEADER_EPOCH_OFFSET 12
#define BATCH_MAGIC_OFFSET 16
#define BATCH_CRC_OFFSET 17
#define BATCH_ATTRIBUTES_OFFSET 21
#define BATCH_LAST_OFFSET_DELTA_OFFSET 23
#define BATCH_BASE_TIMESTAMP_OFFSET 27
#define BATCH_MAX_TIMESTAMP_OFFSET 35
#define BATCH_PRODUCER_ID_OFFSET 43
#define BATCH_PRODUCER_EPOCH_OFFSET 51
#define BATCH_BASE_SEQUENCE_OFFSET 53
#define BATCH_RECORDS_COUNT_OFFSET 57
#define RECORD_BATCH_OVERHEAD 61
#define BATCH_CODEC_MASK 0x07
#define BATCH_TIMESTAMP_TYPE_MASK 0x08
#define BATCH_TRANSACTIONAL_MASK 0x10
#define BATCH_CONTROL_MASK 0x20
#define BATCH_DELETE_HORIZON_MASK 0x40

/* TimestampType ids. */
#define NO_TIMESTAMP_TYPE (-1)
#define CREATE_TIME 0
#define LOG_APPEND_TIME 1

/* Column statuses (reader/columns.py KeyStatus, ValueStatus). */
#define KEY_OK 0
#define KEY_DEFERRED 1
#define KEY_NULL 2
#define KEY_CONTROL 3
#define VALUE_OK 0
#define VALUE_DEFERRED 1
#define VALUE_NULL 2

/* take() statuses (reader/native_reader.py). */
#define STATUS_STOP 0
#define STATUS_FULL 1
#define STATUS_COMPRESSED 2
#define STATUS_SPLIT 3
#define STATUS_DONE 4

/* ------------------------------------------------------------------ StringTable -- */

/* What a string is to its caller, each remembering the id it interned last. */
enum { ROLE_GROUP, ROLE_TOPIC, ROLE_OTHER, STRING_ROLES };

/* Where string `id`'s bytes are (inside the bytes object the table's list keeps alive). */
typedef struct {
    const unsigned char *p;
    int64_t n;
} StringRef;

/* A slot of the open-addressing table: the top of the string's hash beside its id, one
 * 8-byte load for both (a table of 20k strings stays within the core's cache). */
typedef struct {
    uint32_t tag; /* the hash's upper half */
    int32_t id;   /* id + 1, 0 = empty */
} StringSlot;

typedef struct {
    PyObject_HEAD
    PyObject *strings; /* list of bytes, by id */
    StringRef *refs;   /* by id: the bytes of strings[id], compared without the list */
    int64_t refs_capacity;
    StringSlot *slots;
    int64_t capacity; /* power of two */
    int64_t count;
    int64_t last[STRING_ROLES]; /* per role, the id interned last (-1: none): consecutive
                                   records mostly repeat their group and topic */
} StringTable;

static PyTypeObject StringTableType;

static uint64_t
hash_bytes(const unsigned char *p, int64_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n; /* eight bytes at a time, then mixed */
    const unsigned char *end = p + n;
    for (; end - p >= 8; p += 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    int64_t tail = end - p;
    if (tail > 0) {
        /* Whole loads only: a tail copied byte by byte into a word stalls its load (store
         * forwarding fails), which cost a quarter of the interning. */
        uint64_t word;
        if (n >= 8) {
            memcpy(&word, end - 8, 8); /* the last eight bytes, overlapping the words read */
        }
        else if (tail >= 4) {
            uint32_t a, b;
            memcpy(&a, p, 4);
            memcpy(&b, end - 4, 4);
            word = (uint64_t)a | (uint64_t)b << 32;
        }
        else {
            word = (uint64_t)p[0] | (uint64_t)p[tail / 2] << 8 | (uint64_t)end[-1] << 16;
        }
        h = (h ^ word) * 0x94D049BB133111EBull;
    }
    h ^= h >> 29;
    return h * 0xBF58476D1CE4E5B9ull ^ (h >> 32);
}

/* The slot where a probe for hash h starts, in a table of `capacity` slots (a power of two),
 * and the slot after `at` (linear probing, wrapping round). */
static inline int64_t
home_slot(uint64_t h, int64_t capacity)
{
    return (int64_t)(h & (uint64_t)(capacity - 1));
}

static inline int64_t
next_slot(int64_t at, int64_t capacity)
{
    return (at + 1) & (capacity - 1);
}

static int
string_table_grow(StringTable *t)
{
    int64_t capacity = t->capacity ? t->capacity * 2 : 1024;
    StringSlot *slots = (StringSlot *)PyMem_Calloc((size_t)capacity, sizeof(StringSlot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t id = 0; id < t->count; id++) {
        uint64_t h = hash_bytes(t->refs[id].p, t->refs[id].n);
        int64_t at = home_slot(h, capacity);
        while (slots[at].id) {
            at = next_slot(at, capacity);
        }
        slots[at] = (StringSlot){(uint32_t)(h >> 32), (int32_t)(id + 1)};
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return 0;
}

/* Whether a[0:n] equals b[0:n], in whole loads (the strings are short: no call). */
static inline int
bytes_equal(const unsigned char *a, const unsigned char *b, int64_t n)
{
    if (n >= 8) {
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t x, y;
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y) {
                return 0;
            }
        }
        uint64_t x, y; /* the last eight bytes, overlapping */
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t x, y, u, v;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        memcpy(&u, a + n - 4, 4);
        memcpy(&v, b + n - 4, 4);
        return x == y && u == v;
    }
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* Whether string `id` of the table is p[0:n]. */
static inline int
string_table_holds(const StringTable *t, int64_t id, const unsigned char *p, int64_t n)
{
    const StringRef *r = t->refs + id;
    return r->n == n && bytes_equal(r->p, p, n);
}

/* The id of p[0:n], interned if new; -1 with an exception set on failure. */
static int64_t
string_table_intern(StringTable *t, const unsigned char *p, int64_t n, int role)
{
    int64_t last = t->last[role];
    if (last >= 0 && string_table_holds(t, last, p, n)) {
        return last;
    }
    if ((t->count + 1) * 2 > t->capacity && string_table_grow(t) < 0) {
        return -1;
    }
    if (t->count >= INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "a string table holds at most 2^31 - 2 strings");
        return -1;
    }
    uint64_t h = hash_bytes(p, n);
    uint32_t tag = (uint32_t)(h >> 32);
    int64_t at = home_slot(h, t->capacity);
    while (t->slots[at].id) {
        if (t->slots[at].tag == tag && string_table_holds(t, t->slots[at].id - 1, p, n)) {
            return t->last[role] = t->slots[at].id - 1;
        }
        at = next_slot(at, t->capacity);
    }
    if (t->count == t->refs_capacity) {
        int64_t more = t->refs_capacity ? t->refs_capacity * 2 : 1024;
        StringRef *refs = (StringRef *)PyMem_Realloc(t->refs, (size_t)more * sizeof(StringRef));
        if (refs == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->refs = refs;
        t->refs_capacity = more;
    }
    PyObject *s = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
    if (s == NULL) {
        return -1;
    }
    int rc = PyList_Append(t->strings, s);
    Py_DECREF(s);
    if (rc < 0) {
        return -1;
    }
    t->refs[t->count] = (StringRef){(const unsigned char *)PyBytes_AS_STRING(s), n};
    t->slots[at] = (StringSlot){tag, (int32_t)++t->count};
    return t->last[role] = t->count - 1;
}

static PyObject *
StringTable_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (!PyArg_ParseTuple(args, ":StringTable") || (kwds != NULL && PyDict_Size(kwds) > 0)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "StringTable() takes no arguments");
        }
        return NULL;
    }
    StringTable *t = (StringTable *)type->tp_alloc(type, 0);
    if (t == NULL) {
        return NULL;
    }
    for (int role = 0; role < STRING_ROLES; role++) {
        t->last[role] = -1;
    }
    t->strings = PyList_New(0);
    if (t->strings == NULL || string_table_grow(t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

static void
StringTable_dealloc(StringTable *t)
{
    Py_XDECREF(t->strings);
    PyMem_Free(t->slots);
    PyMem_Free(t->refs);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static PyObject *
StringTable_intern(StringTable *t, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    int64_t id = string_table_intern(t, (const unsigned char *)view.buf, view.len, ROLE_OTHER);
    PyBuffer_Release(&view);
    return id < 0 ? NULL : PyLong_FromLongLong(id);
}

/* intern_slices(buffers, buffer, start, size, out) -> len(table): the bytes
 * buffers[buffer[i]][start[i]:start[i] + size[i]] of each row i interned, its id into out
 * (int32). Columns: buffer int16, start int64, size int32, as the reader's record columns. */
static PyObject *
StringTable_intern_slices(StringTable *t, PyObject *args)
{
    PyObject *buffers;
    Py_buffer which, start, size, out;
    if (!PyArg_ParseTuple(args, "O!y*y*y*w*:intern_slices", &PyTuple_Type, &buffers, &which,
                          &start, &size, &out)) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n_buffers = PyTuple_GET_SIZE(buffers);
    Py_buffer *views = (Py_buffer *)PyMem_Calloc((size_t)(n_buffers ? n_buffers : 1),
                                                 sizeof(Py_buffer));
    if (views == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = which.len / 2;
    if (which.len != 2 * n || start.len != 8 * n || size.len != 4 * n || out.len != 4 * n) {
        PyErr_SetString(PyExc_ValueError,
                        "intern_slices: buffer int16, start int64, size int32, out int32 per row");
        goto done;
    }
    const int16_t *b = (const int16_t *)which.buf;
    const int64_t *at = (const int64_t *)start.buf;
    const int32_t *len = (const int32_t *)size.buf;
    int32_t *ids = (int32_t *)out.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t k = b[i];
        if (k < 0 || k >= n_buffers) {
            PyErr_Format(PyExc_IndexError, "intern_slices: row %zd: buffer %zd of %zd", i, k,
                         n_buffers);
            goto done;
        }
        if (views[k].obj == NULL
            && PyObject_GetBuffer(PyTuple_GET_ITEM(buffers, k), &views[k], PyBUF_SIMPLE) < 0) {
            goto done;
        }
        if (at[i] < 0 || len[i] < 0 || at[i] + len[i] > views[k].len) {
            PyErr_Format(PyExc_IndexError, "intern_slices: row %zd: [%lld, +%d) past buffer %zd",
                         i, (long long)at[i], (int)len[i], k);
            goto done;
        }
        int64_t id = string_table_intern(t, (const unsigned char *)views[k].buf + at[i], len[i],
                                         ROLE_OTHER);
        if (id < 0) {
            goto done;
        }
        ids[i] = (int32_t)id;
    }
    result = PyLong_FromLongLong(t->count);
done:
    if (views != NULL) {
        for (Py_ssize_t k = 0; k < n_buffers; k++) {
            if (views[k].obj != NULL) {
                PyBuffer_Release(&views[k]);
            }
        }
        PyMem_Free(views);
    }
    PyBuffer_Release(&which);
    PyBuffer_Release(&start);
    PyBuffer_Release(&size);
    PyBuffer_Release(&out);
    return result;
}

static Py_ssize_t
StringTable_len(StringTable *t)
{
    return (Py_ssize_t)t->count;
}

static PyObject *
StringTable_item(StringTable *t, Py_ssize_t i)
{
    if (i < 0 || i >= t->count) {
        PyErr_SetString(PyExc_IndexError, "string id out of range");
        return NULL;
    }
    PyObject *s = PyList_GET_ITEM(t->strings, i);
    Py_INCREF(s);
    return s;
}

/* texts(ids) -> list: string ids[i] (int32) decoded as well-formed UTF-8, or None where its
 * bytes are not (the caller decodes those by the rules it needs: Java's, or Python's
 * "replace"). Well-formed UTF-8 decodes alike under every such rule. */
static PyObject *
StringTable_texts(StringTable *t, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = view.len / 4;
    if (view.len != 4 * n) {
        PyErr_SetString(PyExc_ValueError, "texts: ids are int32");
        goto done;
    }
    const int32_t *ids = (const int32_t *)view.buf;
    PyObject *texts = PyList_New(n);
    if (texts == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->count) {
            PyErr_Format(PyExc_IndexError, "texts: string id %d of %lld", (int)ids[i],
                         (long long)t->count);
            Py_DECREF(texts);
            goto done;
        }
        const StringRef *r = t->refs + ids[i];
        PyObject *text = PyUnicode_DecodeUTF8((const char *)r->p, (Py_ssize_t)r->n, "strict");
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                Py_DECREF(texts);
                goto done;
            }
            PyErr_Clear();
            text = Py_NewRef(Py_None);
        }
        PyList_SET_ITEM(texts, i, text);
    }
    result = texts;
done:
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef StringTable_methods[] = {
    {"intern", (PyCFunction)StringTable_intern, METH_O,
     "intern(raw) -> id: the id of these bytes, new ids in first-seen order."},
    {"texts", (PyCFunction)StringTable_texts, METH_O,
     "texts(ids) -> list: each id's string decoded as well-formed UTF-8, None where it is not."},
    {"intern_slices", (PyCFunction)StringTable_intern_slices, METH_VARARGS,
     "intern_slices(buffers, buffer, start, size, out) -> len(table): the id of each slice of"
     " the buffers into out (int32)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods StringTable_as_sequence = {
    .sq_length = (lenfunc)StringTable_len,
    .sq_item = (ssizeargfunc)StringTable_item,
};

static PyTypeObject StringTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "offsets_auditor._native.StringTable",
    .tp_basicsize = sizeof(StringTable),
    .tp_dealloc = (destructor)StringTable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Raw byte strings interned to dense ids in first-seen order.",
    .tp_methods = StringTable_methods,
    .tp_as_sequence = &StringTable_as_sequence,
    .tp_new = StringTable_new,
};

/* --------------------------------------------------------------------- KeyTable -- */

/* A slot of the table: the high half of its key's hash (compared before the digest, so a
 * probe past another key does not load that key's digest) and the key's id + 1 (0: empty). */
typedef struct {
    uint32_t tag;
    uint32_t id;
} KeySlot;

typedef struct {
    PyObject_HEAD
    unsigned char *digests; /* count x 16, by id */
    KeySlot *slots;
    int64_t capacity; /* power of two */
    int64_t count;
    int64_t digests_capacity;
} KeyTable;

static PyTypeObject KeyTableType;

/* All 16 bytes mixed (an MD5 is uniform already, but the table also interns packed integer
 * tuples, whose bytes are not). */
static inline uint64_t
digest_hash(const unsigned char *d)
{
    uint64_t lo, hi;
    memcpy(&lo, d, 8);
    memcpy(&hi, d + 8, 8);
    uint64_t h = lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 31);
}

static int
key_table_grow(KeyTable *t)
{
    int64_t capacity = t->capacity ? t->capacity * 2 : 4096;
    KeySlot *slots = (KeySlot *)PyMem_Calloc((size_t)capacity, sizeof(KeySlot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t id = 0; id < t->count; id++) {
        uint64_t h = digest_hash(t->digests + MD5_SIZE * id);
        int64_t at = home_slot(h, capacity);
        while (slots[at].id) {
            at = next_slot(at, capacity);
        }
        slots[at] = (KeySlot){(uint32_t)(h >> 32), (uint32_t)(id + 1)};
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return 0;
}

/* The id of digest d, whose digest_hash is h; inserted when new and `insert`, else -1. -2 on
 * memory error. */
static int64_t
key_table_find(KeyTable *t, const unsigned char *d, uint64_t h, int insert)
{
    if (insert && (t->count + 1) * 2 > t->capacity && key_table_grow(t) < 0) {
        return -2;
    }
    uint32_t tag = (uint32_t)(h >> 32);
    int64_t at = home_slot(h, t->capacity);
    while (t->slots[at].id) {
        int64_t id = (int64_t)t->slots[at].id - 1;
        if (t->slots[at].tag == tag && memcmp(t->digests + MD5_SIZE * id, d, MD5_SIZE) == 0) {
            return id;
        }
        at = next_slot(at, t->capacity);
    }
    if (!insert) {
        return -1;
    }
    if (t->count == t->digests_capacity) {
        int64_t more = t->digests_capacity ? t->digests_capacity * 2 : 4096;
        unsigned char *grown =
            (unsigned char *)PyMem_Realloc(t->digests, (size_t)(more * MD5_SIZE));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -2;
        }
        t->digests = grown;
        t->digests_capacity = more;
    }
    memcpy(t->digests + MD5_SIZE * t->count, d, MD5_SIZE);
    t->slots[at] = (KeySlot){tag, (uint32_t)++t->count};
    return t->count - 1;
}

static PyObject *
KeyTable_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (!PyArg_ParseTuple(args, ":KeyTable") || (kwds != NULL && PyDict_Size(kwds) > 0)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "KeyTable() takes no arguments");
        }
        return NULL;
    }
    KeyTable *t = (KeyTable *)type->tp_alloc(type, 0);
    if (t == NULL) {
        return NULL;
    }
    if (key_table_grow(t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

static void
KeyTable_dealloc(KeyTable *t)
{
    PyMem_Free(t->slots);
    PyMem_Free(t->digests);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* How many digests ahead KeyTable.ids computes hashes and fetches slots. */
#define KEY_AHEAD 16

/* ids(digests, out, insert): out[i] = id of digests[16 i : 16 i + 16] (int32), -1 if absent
 * and not inserted. */
static PyObject *
KeyTable_ids(KeyTable *t, PyObject *args)
{
    Py_buffer digests, out;
    int insert = 1;
    if (!PyArg_ParseTuple(args, "y*w*|p:ids", &digests, &out, &insert)) {
        return NULL;
    }
    PyObject *result = NULL;
    int64_t n = digests.len / MD5_SIZE;
    if (digests.len % MD5_SIZE != 0 || out.len < n * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "digests must be 16-byte items; out an int32 per item");
        goto done;
    }
    if (t->count + n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^31 distinct keys");
        goto done;
    }
    const unsigned char *d = (const unsigned char *)digests.buf;
    int32_t *ids = (int32_t *)out.buf;
    /* A table bigger than the caches costs a memory load per probe: the hashes are computed
     * KEY_AHEAD digests ahead and their first slots fetched meanwhile (KEY_AHEAD: a power of
     * two). A table grown since only makes an early fetch useless, not wrong. */
    uint64_t ahead[KEY_AHEAD];
    for (int64_t i = 0; i < n && i < KEY_AHEAD; i++) {
        ahead[i] = digest_hash(d + MD5_SIZE * i);
        __builtin_prefetch(&t->slots[home_slot(ahead[i], t->capacity)]);
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = ahead[i & (KEY_AHEAD - 1)];
        if (i + KEY_AHEAD < n) {
            uint64_t next = digest_hash(d + MD5_SIZE * (i + KEY_AHEAD));
            ahead[i & (KEY_AHEAD - 1)] = next;
            __builtin_prefetch(&t->slots[home_slot(next, t->capacity)]);
        }
        if (i + KEY_AHEAD / 2 < n) { /* its first slot fetched by now: fetch its digest */
            uint64_t half = ahead[(i + KEY_AHEAD / 2) & (KEY_AHEAD - 1)];
            const KeySlot *slot = &t->slots[home_slot(half, t->capacity)];
            if (slot->id && slot->tag == (uint32_t)(half >> 32)) {
                __builtin_prefetch(t->digests + MD5_SIZE * (slot->id - 1));
            }
        }
        int64_t id = key_table_find(t, d + MD5_SIZE * i, h, insert);
        if (id == -2) {
            goto done;
        }
        ids[i] = (int32_t)id;
    }
    result = PyLong_FromLongLong(t->count);
done:
    PyBuffer_Release(&digests);
    PyBuffer_Release(&out);
    return result;
}

/* digests() -> bytes: the table's digests in id order, 16 bytes each. */
static PyObject *
KeyTable_digests(KeyTable *t, PyObject *unused)
{
    (void)unused;
    return PyBytes_FromStringAndSize((const char *)t->digests, (Py_ssize_t)(t->count * MD5_SIZE));
}

static Py_ssize_t
KeyTable_len(KeyTable *t)
{
    return (Py_ssize_t)t->count;
}

static PyMethodDef KeyTable_methods[] = {
    {"ids", (PyCFunction)KeyTable_ids, METH_VARARGS,
     "ids(digests, out, insert=True) -> count: the int32 id of every 16-byte digest into out\n"
     "(new digests get the next ids in order when insert, else -1); returns the table size."},
    {"digests", (PyCFunction)KeyTable_digests, METH_NOARGS,
     "digests() -> bytes: the digests in id order, 16 bytes each."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods KeyTable_as_sequence = {
    .sq_length = (lenfunc)KeyTable_len,
};

static PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "offsets_auditor._native.KeyTable",
    .tp_basicsize = sizeof(KeyTable),
    .tp_dealloc = (destructor)KeyTable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "16-byte keys (digests, packed tuples) interned to dense int32 ids in first-seen order.",
    .tp_methods = KeyTable_methods,
    .tp_as_sequence = &KeyTable_as_sequence,
    .tp_new = KeyTable_new,
};

/* ----------------------------------------------------------------------- columns -- */

typedef struct {
    unsigned char b[MD5_SIZE];
} digest_t;

/* Record and batch columns, in the order of reader/columns.py DTYPES. */
#define RECORD_COLUMNS(X)                                                                          \
    X(batch, int32_t)                                                                              \
    X(offset, int64_t)                                                                             \
    X(timestamp, int64_t)                                                                          \
    X(magic, int8_t)                                                                               \
    X(key_size, int32_t)                                                                           \
    X(value_size, int32_t)                                                                         \
    X(buffer, int16_t)                                                                             \
    X(key_start, int64_t)                                                                          \
    X(value_start, int64_t)                                                                        \
    X(digest, digest_t)                                                                            \
    X(key_type, int16_t)                                                                           \
    X(key_status, int8_t)                                                                          \
    X(group, int32_t)                                                                              \
    X(topic, int32_t)                                                                              \
    X(partition, int32_t)                                                                          \
    X(value_version, int16_t)                                                                      \
    X(value_status, int8_t)                                                                        \
    X(committed_offset, int64_t)                                                                   \
    X(leader_epoch, int32_t)                                                                       \
    X(commit_timestamp, int64_t)                                                                   \
    X(expire_timestamp, int64_t)                                                                   \
    X(metadata_start, int64_t)                                                                     \
    X(metadata_size, int32_t)                                                                      \
    X(control_type, int16_t)                                                                       \
    X(coordinator_epoch, int32_t)

#define BATCH_COLUMNS(X)                                                                           \
    X(position, int64_t)                                                                           \
    X(size, int64_t)                                                                               \
    X(magic, int8_t)                                                                               \
    X(codec, int8_t)                                                                               \
    X(timestamp_type, int8_t)                                                                      \
    X(base_offset, int64_t)                                                                        \
    X(last_offset, int64_t)                                                                        \
    X(max_timestamp, int64_t)                                                                      \
    X(crc, uint32_t)                                                                               \
    X(transactional, int8_t)                                                                       \
    X(control, int8_t)                                                                             \
    X(producer_id, int64_t)                                                                        \
    X(producer_epoch, int16_t)                                                                     \
    X(base_sequence, int32_t)                                                                      \
    X(partition_leader_epoch, int32_t)                                                             \
    X(record_count, int32_t)                                                                       \
    X(delete_horizon, int64_t)                                                                     \
    X(has_delete_horizon, int8_t)                                                                  \
    X(ordinal, int64_t)                                                                            \
    X(first_record, int64_t)                                                                       \
    X(records, int32_t)                                                                            \
    X(continued, int8_t)

#define DECLARE_COLUMN(name, type) type *name;
typedef struct {
    RECORD_COLUMNS(DECLARE_COLUMN)
} RecordCols;
typedef struct {
    BATCH_COLUMNS(DECLARE_COLUMN)
} BatchCols;
#undef DECLARE_COLUMN

/* One record as the parsers find it, before it is written into the columns. */
typedef struct {
    int64_t offset;
    int64_t timestamp;
    int magic;
    const unsigned char *key; /* NULL: null key */
    int64_t key_len;
    const unsigned char *value; /* NULL: null value */
    int64_t value_len;
} RawRecord;

/* One top-level entry's header as BatchHeader holds it. */
typedef struct {
    int64_t position;
    int64_t size;
    int magic;
    int codec;
    int timestamp_type;
    int64_t base_offset;
    int64_t last_offset;
    int64_t max_timestamp;
    uint32_t crc;
    int transactional;
    int control;
    int64_t producer_id;
    int producer_epoch;
    int32_t base_sequence;
    int32_t partition_leader_epoch;
    int32_t record_count; /* -1: legacy */
    int64_t delete_horizon;
    int has_delete_horizon;
} Header;

/* An entry being emitted over several chunks (status SPLIT), or a compressed entry waiting for
 * its decompressed bytes (status COMPRESSED). */
typedef struct {
    int active;         /* a split in progress */
    int from_payload;   /* ... over a decompressed payload (continued by take_compressed) */
    int compressed;     /* waiting for take_compressed */
    int64_t position;   /* file position of the entry */
    int64_t entry_size; /* bytes of the entry */
    Header header;
    int64_t payload_start; /* compressed: where the payload is, relative to the entry */
    int64_t payload_end;
    int64_t wrapper_offset; /* legacy wrapper: its offset field */
    int64_t wrapper_timestamp;
    int64_t records;      /* split: records in the entry */
    int64_t emitted;      /* split: records emitted so far */
    int64_t cursor;       /* split: where the next record starts in the body */
    int64_t inner_base;   /* split legacy wrapper: offset base of the inner messages */
    int64_t first_record; /* split: segment ordinal of its first record */
    int64_t ordinal;      /* split: segment ordinal of the entry */
} Pending;

typedef struct {
    PyObject_HEAD
    int64_t max_records;
    int simd_width;
    StringTable *strings;
    /* the chunk being built */
    PyObject *record_arrays[32];
    PyObject *batch_arrays[32];
    RecordCols r;
    BatchCols b;
    int64_t n_records;
    int64_t n_batches;
    int64_t capacity; /* rows allocated in every column */
    int64_t first_record;
    /* segment ordinals */
    int64_t next_ordinal;
    int64_t next_record;
    Pending pending;
    /* digests to compute before the buffers the keys are in go away */
    Md5Job *jobs;
    int64_t *job_rows;
    int64_t n_jobs;
    int64_t jobs_capacity;
    /* 0: leave the digest column zero (readers that never look at it: dump, the summary) */
    int digests;
    /* 0: leave the group and topic columns -1, interning no string (the summary, which reads
     * only the keys' and values' versions); key_status is what it would be */
    int names;
} Reader;

static PyTypeObject ReaderType;

#define COUNT_COLUMN(name, type) +1
static const int N_RECORD_COLUMNS = 0 RECORD_COLUMNS(COUNT_COLUMN);
static const int N_BATCH_COLUMNS = 0 BATCH_COLUMNS(COUNT_COLUMN);
#undef COUNT_COLUMN

/* (Re)size every column to `rows` rows; -1 with an exception on failure. */
static int
reader_resize(Reader *rd, int64_t rows)
{
    int i = 0;
#define RESIZE_RECORD(name, type)                                                                  \
    if (rd->record_arrays[i] == NULL) {                                                            \
        rd->record_arrays[i] = PyByteArray_FromStringAndSize(NULL, 0);                             \
        if (rd->record_arrays[i] == NULL) {                                                        \
            return -1;                                                                             \
        }                                                                                          \
    }                                                                                              \
    if (PyByteArray_Resize(rd->record_arrays[i], (Py_ssize_t)(rows * (int64_t)sizeof(type))) < 0) { \
        return -1;                                                                                 \
    }                                                                                              \
    rd->r.name = (type *)PyByteArray_AS_STRING(rd->record_arrays[i]);                              \
    i++;
    RECORD_COLUMNS(RESIZE_RECORD)
#undef RESIZE_RECORD
    i = 0;
#define RESIZE_BATCH(name, type)                                                                   \
    if (rd->batch_arrays[i] == NULL) {                                                             \
        rd->batch_arrays[i] = PyByteArray_FromStringAndSize(NULL, 0);                              \
        if (rd->batch_arrays[i] == NULL) {                                                         \
            return -1;                                                                             \
        }                                                                                          \
    }                                                                                              \
    if (PyByteArray_Resize(rd->batch_arrays[i], (Py_ssize_t)(rows * (int64_t)sizeof(type))) < 0) { \
        return -1;                                                                                 \
    }                                                                                              \
    rd->b.name = (type *)PyByteArray_AS_STRING(rd->batch_arrays[i]);                               \
    i++;
    BATCH_COLUMNS(RESIZE_BATCH)
#undef RESIZE_BATCH
    rd->capacity = rows;
    return 0;
}

/* Room for `records` more records and one more batch row. */
static int
reader_reserve(Reader *rd, int64_t records)
{
    int64_t need = rd->n_records + records;
    if (rd->n_batches + 1 > need) {
        need = rd->n_batches + 1;
    }
    if (need <= rd->capacity) {
        return 0;
    }
    /* Eightfold up to a whole chunk: each growth copies every column (realloc), so doubling
     * from 1024 rows copied about a whole chunk of 38 columns over; eightfold copies about half
     * of one. Starting at a whole chunk would allocate ~25 MiB for a one-record segment. */
    int64_t most = rd->max_records > need ? rd->max_records : need;
    int64_t rows = rd->capacity ? rd->capacity : 1024;
    while (rows < need) {
        rows = rows * 8 < most ? rows * 8 : most;
    }
    return reader_resize(rd, rows);
}

static int
reader_job(Reader *rd, const unsigned char *key, int64_t len, int64_t row)
{
    if (!rd->digests) {
        memset(rd->r.digest[row].b, 0, sizeof rd->r.digest[row].b);
        return 0;
    }
    if (rd->n_jobs == rd->jobs_capacity) {
        int64_t more = rd->jobs_capacity ? rd->jobs_capacity * 2 : 1024;
        Md5Job *jobs = (Md5Job *)PyMem_Realloc(rd->jobs, (size_t)more * sizeof(Md5Job));
        if (jobs == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        rd->jobs = jobs;
        int64_t *rows = (int64_t *)PyMem_Realloc(rd->job_rows, (size_t)more * sizeof(int64_t));
        if (rows == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        rd->job_rows = rows;
        rd->jobs_capacity = more;
    }
    rd->jobs[rd->n_jobs].key = key;
    rd->jobs[rd->n_jobs].len = len;
    rd->job_rows[rd->n_jobs] = row;
    rd->n_jobs++;
    return 0;
}

/* Compute the pending digests (the key bytes are still there). */
static void
reader_run_jobs(Reader *rd)
{
    for (int64_t i = 0; i < rd->n_jobs; i++) {
        rd->jobs[i].out = rd->r.digest[rd->job_rows[i]].b;
    }
    md5_jobs(rd->jobs, rd->n_jobs, rd->simd_width);
    rd->n_jobs = 0;
}

/* --------------------------------------------------------- key and value classes -- */

/* The non-null string (int16 length, bytes) at p[at:n]; its length, or -1. */
static inline int64_t
string_at(const unsigned char *p, int64_t n, int64_t at)
{
    if (n - at < 2) {
        return -1;
    }
    int64_t len = be16(p + at);
    if (len < 0 || n - at - 2 < len) {
        return -1;
    }
    return len;
}

/* Fill the key columns of row `row` (reader/classify.py; columns.py). -1 on memory error. */
static int
classify_key(Reader *rd, int64_t row, const RawRecord *rec)
{
    const unsigned char *k = rec->key;
    int64_t n = rec->key_len;
    rd->r.key_type[row] = (k != NULL && n >= 2) ? be16(k) : -1;
    rd->r.key_status[row] = KEY_DEFERRED;
    rd->r.group[row] = -1;
    rd->r.topic[row] = -1;
    rd->r.partition[row] = -1;
    if (k == NULL) {
        rd->r.key_status[row] = KEY_NULL;
        return 0;
    }
    int64_t group_len = n >= 4 ? string_at(k, n, 2) : -1;
    if (group_len >= 0 && rd->names) {
        int64_t id = string_table_intern(rd->strings, k + 4, group_len, ROLE_GROUP);
        if (id < 0) {
            return -1;
        }
        rd->r.group[row] = (int32_t)id;
    }
    int type = rd->r.key_type[row];
    if ((type == 0 || type == 1) && group_len >= 0) {
        int64_t topic_at = 4 + group_len;
        int64_t topic_len = string_at(k, n, topic_at);
        if (topic_len >= 0 && topic_at + 2 + topic_len + 4 == n) {
            if (rd->names) {
                int64_t id =
                    string_table_intern(rd->strings, k + topic_at + 2, topic_len, ROLE_TOPIC);
                if (id < 0) {
                    return -1;
                }
                rd->r.topic[row] = (int32_t)id;
            }
            rd->r.partition[row] = be32(k + n - 4);
            rd->r.key_status[row] = KEY_OK;
        }
    }
    else if (type == 2 && group_len >= 0 && 4 + group_len == n) {
        rd->r.key_status[row] = KEY_OK;
    }
    return 0;
}

/* Fill the value columns of row `row`: an OffsetCommitValue v0-v3 of an OK OffsetCommitKey. */
static void
classify_value(Reader *rd, int64_t row, const RawRecord *rec, int64_t value_start)
{
    const unsigned char *v = rec->value;
    int64_t n = rec->value_len;
    rd->r.value_version[row] = (v != NULL && n >= 2) ? be16(v) : -1;
    rd->r.value_status[row] = v == NULL ? VALUE_NULL : VALUE_DEFERRED;
    rd->r.committed_offset[row] = 0;
    rd->r.leader_epoch[row] = -1;
    rd->r.commit_timestamp[row] = 0;
    rd->r.expire_timestamp[row] = -1;
    rd->r.metadata_start[row] = 0;
    rd->r.metadata_size[row] = 0;
    int key_type = rd->r.key_type[row]; /* an OK key of type 0 or 1 is an OffsetCommitKey */
    if (v == NULL || rd->r.key_status[row] != KEY_OK || (key_type != 0 && key_type != 1)) {
        return;
    }
    int version = rd->r.value_version[row];
    int64_t at; /* OffsetCommitValue: version, offset [, leader_epoch v3], metadata, ... */
    if (version == 3) {
        if (n < 14) {
            return;
        }
        at = 14;
    }
    else if (version >= 0 && version <= 2) {
        if (n < 10) {
            return;
        }
        at = 10;
    }
    else {
        return;
    }
    int64_t metadata_len = string_at(v, n, at);
    if (metadata_len < 0) {
        return;
    }
    int64_t metadata_at = at + 2;
    at = metadata_at + metadata_len;
    if (n - at < (version == 1 ? 16 : 8)) {
        return;
    }
    rd->r.committed_offset[row] = be64(v + 2);
    rd->r.leader_epoch[row] = version == 3 ? be32(v + 10) : -1;
    rd->r.metadata_start[row] = value_start + metadata_at;
    rd->r.metadata_size[row] = (int32_t)metadata_len;
    rd->r.commit_timestamp[row] = be64(v + at);
    rd->r.expire_timestamp[row] = version == 1 ? be64(v + at + 8) : -1;
    rd->r.value_status[row] = VALUE_OK;
}

/* records/control.py decode_control: 1 (and the type and epoch) if it decodes, else 0. */
static int
decode_control(const RawRecord *rec, int *type, int32_t *epoch)
{
    if (rec->key == NULL || rec->key_len < 4 || be16(rec->key) < 0) {
        return 0;
    }
    *type = be16(rec->key + 2);
    *epoch = 0;
    if (*type == 0 || *type == 1) { /* ABORT, COMMIT: EndTransactionMarker version, epoch */
        if (rec->value == NULL || rec->value_len < 6 || be16(rec->value) < 0) {
            return 0;
        }
        *epoch = be32(rec->value + 2);
    }
    return 1;
}

/* Append one record of batch row `batch_row`; its bytes are in buffer `buffer` whose first byte
 * is at `base` in memory. -1 on memory error. */
static int
emit_record(Reader *rd, const RawRecord *rec, int64_t batch_row, int control, int buffer,
            const unsigned char *base)
{
    int64_t row = rd->n_records;
    rd->r.batch[row] = (int32_t)batch_row;
    rd->r.offset[row] = rec->offset;
    rd->r.timestamp[row] = rec->timestamp;
    rd->r.magic[row] = (int8_t)rec->magic;
    rd->r.key_size[row] = rec->key == NULL ? -1 : (int32_t)rec->key_len;
    rd->r.value_size[row] = rec->value == NULL ? -1 : (int32_t)rec->value_len;
    rd->r.buffer[row] = (int16_t)buffer;
    rd->r.key_start[row] = rec->key == NULL ? 0 : (int64_t)(rec->key - base);
    rd->r.value_start[row] = rec->value == NULL ? 0 : (int64_t)(rec->value - base);
    memset(rd->r.digest[row].b, 0, MD5_SIZE);
    rd->r.control_type[row] = -1;
    rd->r.coordinator_epoch[row] = 0;
    if (control) {
        int type;
        int32_t epoch;
        rd->r.key_type[row] = -1;
        rd->r.group[row] = -1;
        rd->r.topic[row] = -1;
        rd->r.partition[row] = -1;
        if (decode_control(rec, &type, &epoch)) {
            rd->r.key_status[row] = KEY_CONTROL;
            rd->r.control_type[row] = (int16_t)type;
            rd->r.coordinator_epoch[row] = epoch;
        }
        else {
            rd->r.key_status[row] = KEY_DEFERRED;
        }
    }
    else if (classify_key(rd, row, rec) < 0) {
        return -1;
    }
    if (rec->key != NULL && reader_job(rd, rec->key, rec->key_len, row) < 0) {
        return -1;
    }
    classify_value(rd, row, rec, rd->r.value_start[row]);
    rd->n_records++;
    return 0;
}

static void
emit_batch_row(Reader *rd, const Header *h, int64_t ordinal, int64_t first_record,
               int64_t records, int continued)
{
    int64_t i = rd->n_batches++;
    rd->b.position[i] = h->position;
    rd->b.size[i] = h->size;
    rd->b.magic[i] = (int8_t)h->magic;
    rd->b.codec[i] = (int8_t)h->codec;
    rd->b.timestamp_type[i] = (int8_t)h->timestamp_type;
    rd->b.base_offset[i] = h->base_offset;
    rd->b.last_offset[i] = h->last_offset;
    rd->b.max_timestamp[i] = h->max_timestamp;
    rd->b.crc[i] = h->crc;
    rd->b.transactional[i] = (int8_t)h->transactional;
    rd->b.control[i] = (int8_t)h->control;
    rd->b.producer_id[i] = h->producer_id;
    rd->b.producer_epoch[i] = (int16_t)h->producer_epoch;
    rd->b.base_sequence[i] = h->base_sequence;
    rd->b.partition_leader_epoch[i] = h->partition_leader_epoch;
    rd->b.record_count[i] = h->record_count;
    rd->b.delete_horizon[i] = h->delete_horizon;
    rd->b.has_delete_horizon[i] = (int8_t)h->has_delete_horizon;
    rd->b.ordinal[i] = ordinal;
    rd->b.first_record[i] = first_record;
    rd->b.records[i] = (int32_t)records;
    rd->b.continued[i] = (int8_t)continued;
}

/* ------------------------------------------------------------------ legacy format -- */

/* A legacy message p[0:n] (n = its size: crc through value, after the log overhead), checked
 * as records/legacy.py _message_body and the CRC check do: 1 and *rec filled (offset left to
 * the caller), or 0 if the reference decoder would refuse it. */
static int
parse_legacy_message(const unsigned char *p, int64_t n, RawRecord *rec, int *attributes)
{
    if (n < LEGACY_ATTRIBUTES_OFFSET + 1) {
        return 0;
    }
    int magic = (int8_t)p[LEGACY_MAGIC_OFFSET];
    if (magic != 0 && magic != 1) {
        return 0;
    }
    if (n < (magic == 1 ? RECORD_OVERHEAD_V1 : RECORD_OVERHEAD_V0)) {
        return 0;
    }
    if (crc32_zlib(p + LEGACY_MAGIC_OFFSET, n - LEGACY_MAGIC_OFFSET)
        != be32u(p + LEGACY_CRC_OFFSET)) {
        return 0;
    }
    *attributes = p[LEGACY_ATTRIBUTES_OFFSET];
    rec->magic = magic;
    rec->timestamp = magic == 1 ? be64(p + LEGACY_TIMESTAMP_OFFSET) : -1;
    int64_t at = magic == 1 ? LEGACY_KEY_LENGTH_OFFSET_V1 : LEGACY_KEY_LENGTH_OFFSET_V0;
    for (int part = 0; part < 2; part++) { /* key, then value: int32 length (-1 null), bytes */
        if (n - at < 4) {
            return 0;
        }
        int64_t len = be32(p + at);
        at += 4;
        const unsigned char *bytes = NULL;
        if (len < 0) {
            if (len != -1) {
                return 0;
            }
            len = 0;
        }
        else {
            if (n - at < len) {
                return 0;
            }
            bytes = p + at;
            at += len;
        }
        if (part == 0) {
            rec->key = bytes;
            rec->key_len = len;
        }
        else {
            rec->value = bytes;
            rec->value_len = len;
        }
    }
    return at == n;
}

/* The inner messages of a decompressed legacy wrapper, q[0:n] (records/legacy.py
 * _inner_records): how many there are and the offset base, or -1 if the reference decoder would
 * refuse them. With `out`, emits records [from, from + count) of them into batch row `row`. */
static int64_t
walk_inner_messages(Reader *rd, const unsigned char *q, int64_t n, const Pending *w,
                    int64_t *base, int64_t from, int64_t count, int64_t row, int buffer)
{
    int64_t pos = 0, index = 0, last_inner = 0;
    while (pos < n) {
        if (n - pos < LOG_OVERHEAD + RECORD_OVERHEAD_V0) {
            return -1;
        }
        int64_t inner_offset = be64(q + pos + LOG_OFFSET_OFFSET);
        int64_t size = be32(q + pos + LOG_SIZE_OFFSET);
        if (size < RECORD_OVERHEAD_V0 || n - pos - LOG_OVERHEAD < size) {
            return -1;
        }
        RawRecord rec;
        int attributes;
        if (!parse_legacy_message(q + pos + LOG_OVERHEAD, size, &rec, &attributes)
            || (attributes & LEGACY_CODEC_MASK) != 0) {
            return -1;
        }
        if (rec.magic == 1 && w->header.timestamp_type == LOG_APPEND_TIME) {
            rec.timestamp = w->wrapper_timestamp;
        }
        if (row >= 0 && index >= from && index < from + count) {
            rec.offset = *base + inner_offset;
            if (emit_record(rd, &rec, row, 0, buffer, q) < 0) {
                return -2;
            }
        }
        last_inner = inner_offset;
        index++;
        pos += LOG_OVERHEAD + size;
    }
    if (index == 0) {
        return -1;
    }
    if (w->header.magic == 0 || w->wrapper_offset == 0) {
        *base = 0; /* magic 0: absolute offsets; 0: some librdkafka versions */
    }
    else {
        if (w->wrapper_offset < last_inner) {
            return -1;
        }
        *base = w->wrapper_offset - last_inner;
    }
    return index;
}

/* The legacy entry p[0:n] at file position `position` (framing checked by the caller). Plain
 * messages are emitted; compressed wrappers are parked in rd->pending (STATUS_COMPRESSED).
 * Returns a status, or -1 (refuse), -2 (memory error). */
static int
take_legacy(Reader *rd, const unsigned char *p, int64_t n, int64_t position, int buffer,
            const unsigned char *base)
{
    RawRecord rec;
    int attributes;
    if (!parse_legacy_message(p + LOG_OVERHEAD, n - LOG_OVERHEAD, &rec, &attributes)) {
        return -1;
    }
    Header h;
    memset(&h, 0, sizeof h);
    h.position = position;
    h.size = n;
    h.magic = rec.magic;
    h.codec = attributes & LEGACY_CODEC_MASK;
    h.timestamp_type = rec.magic == 0 ? NO_TIMESTAMP_TYPE
                       : (attributes & LEGACY_TIMESTAMP_TYPE_MASK) ? LOG_APPEND_TIME
                                                                   : CREATE_TIME;
    h.max_timestamp = rec.timestamp;
    h.crc = be32u(p + LOG_OVERHEAD + LEGACY_CRC_OFFSET);
    h.producer_id = -1;
    h.producer_epoch = -1;
    h.base_sequence = -1;
    h.partition_leader_epoch = -1;
    h.record_count = -1;
    int64_t offset = be64(p + LOG_OFFSET_OFFSET);
    if (h.codec != 0) {
        if (rec.value == NULL) {
            return -1; /* "Found invalid compressed record set with null value" */
        }
        Pending *w = &rd->pending;
        memset(w, 0, sizeof *w);
        w->compressed = 1;
        w->position = position;
        w->entry_size = n;
        w->header = h;
        w->payload_start = rec.value - p;
        w->payload_end = w->payload_start + rec.value_len;
        w->wrapper_offset = offset;
        w->wrapper_timestamp = rec.timestamp;
        return STATUS_COMPRESSED;
    }
    if (rd->n_records && rd->n_records + 1 > rd->max_records) {
        return STATUS_FULL;
    }
    if (rd->n_batches >= rd->max_records) {
        return STATUS_FULL;
    }
    if (reader_reserve(rd, 1) < 0) {
        return -2;
    }
    h.base_offset = h.last_offset = rec.offset = offset;
    int64_t row = rd->n_batches;
    emit_batch_row(rd, &h, rd->next_ordinal, rd->next_record, 1, 0);
    if (emit_record(rd, &rec, row, 0, buffer, base) < 0) {
        return -2;
    }
    rd->next_ordinal++;
    rd->next_record++;
    return STATUS_DONE;
}

/* ---------------------------------------------------------------------- v2 format -- */

/* The records of a v2 batch in body[0:n] (records/default.py _records / _record): 1 if all
 * `count` of them parse exactly, else 0. With row >= 0, emits records [from, from + want) into
 * that batch row. *cursor: where to start (0, or where a SPLIT left off, then index = from). */
static int
parse_v2_records(Reader *rd, const unsigned char *body, int64_t n, const Header *h,
                 int64_t base_timestamp, int64_t count, int64_t from, int64_t want, int64_t row,
                 int buffer, const unsigned char *base, int64_t *cursor, int *nomem)
{
    int64_t at = *cursor;
    int log_append = h->timestamp_type == LOG_APPEND_TIME;
    if (count > n) { /* every record takes at least one byte: refuse before looping */
        return 0;
    }
    for (int64_t index = from; index < count; index++) {
        if (row >= 0 && index >= from + want) {
            *cursor = at;
            return 1;
        }
        int64_t length, timestamp_delta, offset_delta, key_len, value_len, headers;
        if (!read_varint(body, &at, n, 5, &length)) {
            return 0;
        }
        int64_t record_end = at + length;
        if (length < 0 || record_end > n) {
            return 0;
        }
        at += 1; /* attributes: unused */
        if (!read_varint(body, &at, record_end, 10, &timestamp_delta)
            || !read_varint(body, &at, record_end, 5, &offset_delta)
            || !read_varint(body, &at, record_end, 5, &key_len)) {
            return 0;
        }
        RawRecord rec;
        rec.magic = 2;
        rec.key = NULL;
        rec.key_len = 0;
        if (key_len >= 0) { /* any negative length is null */
            if (key_len > record_end - at) {
                return 0;
            }
            rec.key = body + at;
            rec.key_len = key_len;
            at += key_len;
        }
        if (!read_varint(body, &at, record_end, 5, &value_len)) {
            return 0;
        }
        rec.value = NULL;
        rec.value_len = 0;
        if (value_len >= 0) {
            if (value_len > record_end - at) {
                return 0;
            }
            rec.value = body + at;
            rec.value_len = value_len;
            at += value_len;
        }
        if (!read_varint(body, &at, record_end, 5, &headers)) {
            return 0;
        }
        if (headers < 0 || headers > record_end - at) {
            return 0;
        }
        for (int64_t i = 0; i < headers; i++) {
            int64_t header_key_len, header_value_len;
            if (!read_varint(body, &at, record_end, 5, &header_key_len) || header_key_len < 0
                || header_key_len > record_end - at) {
                return 0; /* a null header key is refused ("Invalid negative header key size") */
            }
            at += header_key_len;
            if (!read_varint(body, &at, record_end, 5, &header_value_len)) {
                return 0;
            }
            if (header_value_len >= 0) {
                if (header_value_len > record_end - at) {
                    return 0;
                }
                at += header_value_len;
            }
        }
        if (at != record_end) {
            return 0;
        }
        if ((offset_delta > 0 && h->base_offset > INT64_MAX - offset_delta)
            || (offset_delta < 0 && h->base_offset < INT64_MIN - offset_delta)) {
            return 0; /* Python's ints do not overflow; it says what it makes of it */
        }
        rec.offset = h->base_offset + offset_delta;
        if (log_append) {
            rec.timestamp = h->max_timestamp;
        }
        else {
            if ((timestamp_delta > 0 && base_timestamp > INT64_MAX - timestamp_delta)
                || (timestamp_delta < 0 && base_timestamp < INT64_MIN - timestamp_delta)) {
                return 0;
            }
            rec.timestamp = base_timestamp + timestamp_delta;
        }
        if (row >= 0 && emit_record(rd, &rec, row, h->control, buffer, base) < 0) {
            *nomem = 1;
            return 0;
        }
    }
    if (at != n) {
        return 0; /* "Incorrect declared batch size, records still remaining in file" */
    }
    *cursor = at;
    return 1;
}

/* The header of the v2 batch p[0:n] (records/default.py decode_batch); 0 if the reference
 * decoder would refuse it before its records. */
static int
parse_v2_header(const unsigned char *p, int64_t n, int64_t position, Header *h,
                int64_t *base_timestamp)
{
    if (n < RECORD_BATCH_OVERHEAD) {
        return 0;
    }
    if (crc32_castagnoli(p + BATCH_ATTRIBUTES_OFFSET, n - BATCH_ATTRIBUTES_OFFSET)
        != be32u(p + BATCH_CRC_OFFSET)) {
        return 0;
    }
    int attributes = be16(p + BATCH_ATTRIBUTES_OFFSET);
    memset(h, 0, sizeof *h);
    h->position = position;
    h->size = n;
    h->magic = 2;
    h->codec = attributes & BATCH_CODEC_MASK;
    h->timestamp_type = (attributes & BATCH_TIMESTAMP_TYPE_MASK) ? LOG_APPEND_TIME : CREATE_TIME;
    h->base_offset = be64(p + BATCH_BASE_OFFSET_OFFSET);
    int64_t last_delta = be32(p + BATCH_LAST_OFFSET_DELTA_OFFSET);
    if ((last_delta > 0 && h->base_offset > INT64_MAX - last_delta)
        || (last_delta < 0 && h->base_offset < INT64_MIN - last_delta)) {
        return 0;
    }
    h->last_offset = h->base_offset + last_delta;
    *base_timestamp = be64(p + BATCH_BASE_TIMESTAMP_OFFSET);
    h->max_timestamp = be64(p + BATCH_MAX_TIMESTAMP_OFFSET);
    h->crc = be32u(p + BATCH_CRC_OFFSET);
    h->transactional = (attributes & BATCH_TRANSACTIONAL_MASK) != 0;
    h->control = (attributes & BATCH_CONTROL_MASK) != 0;
    h->producer_id = be64(p + BATCH_PRODUCER_ID_OFFSET);
    h->producer_epoch = be16(p + BATCH_PRODUCER_EPOCH_OFFSET);
    h->base_sequence = be32(p + BATCH_BASE_SEQUENCE_OFFSET);
    h->partition_leader_epoch = be32(p + BATCH_PARTITION_LEADER_EPOCH_OFFSET);
    h->record_count = be32(p + BATCH_RECORDS_COUNT_OFFSET);
    h->has_delete_horizon = (attributes & BATCH_DELETE_HORIZON_MASK) != 0;
    h->delete_horizon = h->has_delete_horizon ? *base_timestamp : 0;
    return h->record_count >= 0;
}

/* Emit the records of an entry whose records were validated: all of them in this chunk, or
 * (more than a chunk holds) the first part, parking the rest in rd->pending (STATUS_SPLIT).
 * `body`/`n`: the records section (v2) or decompressed inner set (legacy wrapper). */
static int emit_validated(Reader *rd, const Header *h, const unsigned char *body, int64_t n,
                          int64_t base_timestamp, int64_t count, const Pending *w, int buffer,
                          const unsigned char *base);

static int
take_v2(Reader *rd, const unsigned char *p, int64_t n, int64_t position, int buffer,
        const unsigned char *base)
{
    Header h;
    int64_t base_timestamp;
    if (!parse_v2_header(p, n, position, &h, &base_timestamp)) {
        return -1;
    }
    if (h.codec != 0) {
        Pending *w = &rd->pending;
        memset(w, 0, sizeof *w);
        w->compressed = 1;
        w->position = position;
        w->entry_size = n;
        w->header = h;
        w->payload_start = RECORD_BATCH_OVERHEAD;
        w->payload_end = n;
        w->wrapper_timestamp = base_timestamp;
        return STATUS_COMPRESSED;
    }
    int64_t count = h.record_count;
    if (rd->n_batches >= rd->max_records
        || (rd->n_records && rd->n_records + count > rd->max_records)) {
        return STATUS_FULL;
    }
    const unsigned char *body = p + RECORD_BATCH_OVERHEAD;
    int64_t body_len = n - RECORD_BATCH_OVERHEAD;
    if (count <= rd->max_records) { /* one pass, undone if a record is refused */
        if (count > body_len) {
            return -1;
        }
        if (reader_reserve(rd, count) < 0) {
            return -2;
        }
        int64_t saved_records = rd->n_records, saved_batches = rd->n_batches;
        int64_t saved_jobs = rd->n_jobs, cursor = 0;
        int nomem = 0;
        int64_t row = rd->n_batches;
        emit_batch_row(rd, &h, rd->next_ordinal, rd->next_record, count, 0);
        if (!parse_v2_records(rd, body, body_len, &h, base_timestamp, count, 0, count, row, buffer,
                              base, &cursor, &nomem)) {
            rd->n_records = saved_records;
            rd->n_batches = saved_batches;
            rd->n_jobs = saved_jobs;
            return nomem ? -2 : -1;
        }
        rd->next_ordinal++;
        rd->next_record += count;
        return STATUS_DONE;
    }
    int64_t cursor = 0;
    int nomem = 0;
    if (!parse_v2_records(rd, body, body_len, &h, base_timestamp, count, 0, 0, -1, buffer, base,
                          &cursor, &nomem)) {
        return -1;
    }
    Pending w;
    memset(&w, 0, sizeof w);
    w.wrapper_timestamp = base_timestamp;
    return emit_validated(rd, &h, body, body_len, base_timestamp, count, &w, buffer, base);
}

static int
emit_validated(Reader *rd, const Header *h, const unsigned char *body, int64_t n,
               int64_t base_timestamp, int64_t count, const Pending *w, int buffer,
               const unsigned char *base)
{
    Pending *s = &rd->pending;
    int resuming = s->active;
    if (!resuming) {
        Pending fresh = *w;
        fresh.active = 1;
        fresh.compressed = 0;
        fresh.position = h->position;
        fresh.entry_size = h->size;
        fresh.header = *h;
        fresh.records = count;
        fresh.emitted = 0;
        fresh.cursor = 0;
        fresh.first_record = rd->next_record;
        fresh.ordinal = rd->next_ordinal;
        *s = fresh;
    }
    int64_t want = count - s->emitted;
    if (want > rd->max_records) {
        want = rd->max_records;
    }
    if (reader_reserve(rd, want) < 0) {
        return -2;
    }
    int64_t row = rd->n_batches;
    emit_batch_row(rd, &s->header, s->ordinal, s->first_record, count, s->emitted > 0);
    int nomem = 0;
    if (s->header.magic == 2) {
        if (!parse_v2_records(rd, body, n, &s->header, base_timestamp, count, s->emitted, want,
                              row, buffer, base, &s->cursor, &nomem)) {
            s->active = 0;
            return nomem ? -2 : -1;
        }
    }
    else {
        int64_t offset_base = s->inner_base;
        int64_t found = walk_inner_messages(rd, body, n, s, &offset_base, s->emitted, want, row,
                                            buffer);
        if (found < 0) {
            s->active = 0;
            return found == -2 ? -2 : -1;
        }
    }
    s->emitted += want;
    if (s->emitted < count) {
        return STATUS_SPLIT;
    }
    s->active = 0;
    rd->next_ordinal = s->ordinal + 1;
    rd->next_record = s->first_record + count;
    return STATUS_DONE;
}

/* ----------------------------------------------------------------------- Reader -- */

static PyObject *
Reader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"strings", "max_records", "simd_width", "digests", "names", NULL};
    PyObject *strings;
    long long max_records = 1 << 16;
    int simd_width = 0;
    int digests = 1;
    int names = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|Lipp:Reader", kwlist, &StringTableType,
                                     &strings, &max_records, &simd_width, &digests, &names)) {
        return NULL;
    }
    if (max_records < 1 || max_records > (1LL << 30)) {
        PyErr_SetString(PyExc_ValueError, "max_records must be between 1 and 2^30");
        return NULL;
    }
    if (simd_width != 0 && simd_width != 1 && simd_width != 8 && simd_width != 16) {
        PyErr_SetString(PyExc_ValueError, "simd_width must be 0 (the CPU's widest), 1, 8 or 16");
        return NULL;
    }
    Reader *rd = (Reader *)type->tp_alloc(type, 0);
    if (rd == NULL) {
        return NULL;
    }
    rd->max_records = max_records;
    rd->simd_width = simd_width ? simd_width : md5_max_width();
    rd->digests = digests;
    rd->names = names;
    Py_INCREF(strings);
    rd->strings = (StringTable *)strings;
    if (reader_resize(rd, 0) < 0) {
        Py_DECREF(rd);
        return NULL;
    }
    return (PyObject *)rd;
}

static void
Reader_dealloc(Reader *rd)
{
    for (int i = 0; i < 32; i++) {
        Py_XDECREF(rd->record_arrays[i]);
        Py_XDECREF(rd->batch_arrays[i]);
    }
    Py_XDECREF(rd->strings);
    PyMem_Free(rd->jobs);
    PyMem_Free(rd->job_rows);
    Py_TYPE(rd)->tp_free((PyObject *)rd);
}

/* start(ordinal, record): the segment ordinals of the next entry and record. */
static PyObject *
Reader_start(Reader *rd, PyObject *args)
{
    long long ordinal, record;
    if (!PyArg_ParseTuple(args, "LL:start", &ordinal, &record)) {
        return NULL;
    }
    if (rd->n_records || rd->n_batches || rd->pending.active || rd->pending.compressed) {
        if (ordinal != rd->next_ordinal || record != rd->next_record) {
            PyErr_SetString(PyExc_ValueError, "start() moves the ordinals of a chunk in progress");
            return NULL;
        }
    }
    rd->next_ordinal = ordinal;
    rd->next_record = record;
    if (!rd->n_records && !rd->n_batches) {
        rd->first_record = record;
    }
    Py_RETURN_NONE;
}

/* take(window, start, end, file_position, buffer, max_entry_bytes)
 *   -> (next_rel, status): takes the whole entries of window[start:end] it can. */
static PyObject *
Reader_take(Reader *rd, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    long long file_position, max_entry;
    int buffer;
    if (!PyArg_ParseTuple(args, "y*nnLiL:take", &view, &start, &end, &file_position, &buffer,
                          &max_entry)) {
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
    const unsigned char *w = (const unsigned char *)view.buf;
    Py_ssize_t pos = start;
    int status = STATUS_STOP;
    rd->pending.compressed = 0; /* a parked compressed entry was given up */
    if (rd->pending.active && rd->pending.from_payload) {
        rd->pending.active = 0;
    }
    while (end - pos > HEADER_SIZE_UP_TO_MAGIC) {
        int64_t size = be32(w + pos + LOG_SIZE_OFFSET);
        if (size < MIN_ENTRY_SIZE) {
            break;
        }
        int64_t n = LOG_OVERHEAD + size;
        if (n > end - pos || n > max_entry) {
            break; /* not whole in the window, or too big: the walk frames it */
        }
        int64_t position = file_position + (int64_t)(pos - start);
        int magic = (int8_t)w[pos + LOG_OVERHEAD + LEGACY_MAGIC_OFFSET];
        int taken;
        if (rd->pending.active) {
            if (rd->pending.position != position || rd->pending.compressed) {
                rd->pending.active = 0; /* the walk moved on: forget the split */
                taken = -1;
            }
            else {
                const unsigned char *body = w + pos + RECORD_BATCH_OVERHEAD;
                taken = emit_validated(rd, &rd->pending.header, body, n - RECORD_BATCH_OVERHEAD,
                                       rd->pending.wrapper_timestamp, rd->pending.records,
                                       &rd->pending, buffer, w);
            }
        }
        else if (magic == 2) {
            taken = take_v2(rd, w + pos, n, position, buffer, w);
        }
        else if (magic == 0 || magic == 1) {
            taken = take_legacy(rd, w + pos, n, position, buffer, w);
        }
        else {
            taken = -1;
        }
        if (taken == -2) {
            reader_run_jobs(rd);
            PyBuffer_Release(&view);
            return NULL;
        }
        if (taken == STATUS_DONE) {
            pos += (Py_ssize_t)n;
            continue;
        }
        if (taken >= 0) {
            status = taken;
        }
        break;
    }
    reader_run_jobs(rd);
    PyBuffer_Release(&view);
    return Py_BuildValue("(ni)", pos, status);
}

/* payload() -> (start, end, codec, magic): where the parked compressed entry's payload is,
 * relative to the entry. */
static PyObject *
Reader_payload(Reader *rd, PyObject *unused)
{
    (void)unused;
    if (!rd->pending.compressed) {
        PyErr_SetString(PyExc_ValueError, "no compressed entry is waiting");
        return NULL;
    }
    return Py_BuildValue("(LLii)", (long long)rd->pending.payload_start,
                         (long long)rd->pending.payload_end, rd->pending.header.codec,
                         rd->pending.header.magic);
}

/* take_compressed(data, buffer) -> status: the parked compressed entry's records from its
 * decompressed payload `data` (Chunk buffer `buffer`). STATUS_DONE, STATUS_FULL (nothing taken:
 * flush and call again), STATUS_SPLIT (part taken: flush and call again), or STATUS_STOP (the
 * reference decoder must take the entry). */
static PyObject *
Reader_take_compressed(Reader *rd, PyObject *args)
{
    Py_buffer view;
    int buffer;
    if (!PyArg_ParseTuple(args, "y*i:take_compressed", &view, &buffer)) {
        return NULL;
    }
    Pending *w = &rd->pending;
    if (!w->compressed && !w->active) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "no compressed entry is waiting");
        return NULL;
    }
    const unsigned char *q = (const unsigned char *)view.buf;
    int64_t n = view.len;
    int status;
    if (w->active) { /* a split in progress */
        status = emit_validated(rd, &w->header, q, n, w->wrapper_timestamp, w->records, w, buffer,
                                q);
    }
    else {
        Header h = w->header;
        int64_t count, cursor = 0;
        int nomem = 0;
        if (h.magic == 2) {
            count = h.record_count;
            if (!parse_v2_records(rd, q, n, &h, w->wrapper_timestamp, count, 0, 0, -1, buffer, q,
                                  &cursor, &nomem)) {
                count = -1;
            }
        }
        else {
            int64_t base = 0;
            count = walk_inner_messages(rd, q, n, w, &base, 0, 0, -1, buffer);
            if (count > 0) {
                w->inner_base = base;
                h.last_offset = w->wrapper_offset;
            }
        }
        if (count < 0) {
            w->compressed = 0;
            status = STATUS_STOP;
        }
        else if (rd->n_batches >= rd->max_records
                 || (rd->n_records && rd->n_records + count > rd->max_records)) {
            status = STATUS_FULL;
        }
        else {
            if (h.magic != 2) { /* the wrapper's base offset is its first inner record's */
                const unsigned char *first = q;
                h.base_offset = w->inner_base + be64(first + LOG_OFFSET_OFFSET);
            }
            w->compressed = 0;
            Pending parked = *w;
            status = emit_validated(rd, &h, q, n, w->wrapper_timestamp, count, &parked, buffer, q);
            if (status == STATUS_SPLIT) {
                rd->pending.from_payload = 1;
            }
        }
    }
    if (status == -2) {
        reader_run_jobs(rd);
        PyBuffer_Release(&view);
        return NULL;
    }
    if (status == -1) {
        status = STATUS_STOP;
    }
    reader_run_jobs(rd);
    PyBuffer_Release(&view);
    return PyLong_FromLong(status);
}

/* flush() -> (first_record, n_records, record_columns, n_batches, batch_columns): the chunk
 * built so far (bytearrays, one per column, in columns.py order); the reader starts a new one. */
static PyObject *
Reader_flush(Reader *rd, PyObject *unused)
{
    (void)unused;
    reader_run_jobs(rd);
    PyObject *records = PyTuple_New(N_RECORD_COLUMNS);
    PyObject *batches = PyTuple_New(N_BATCH_COLUMNS);
    if (records == NULL || batches == NULL) {
        Py_XDECREF(records);
        Py_XDECREF(batches);
        return NULL;
    }
    int i = 0;
#define HAND_OVER_RECORD(name, type)                                                               \
    if (PyByteArray_Resize(rd->record_arrays[i], (Py_ssize_t)(rd->n_records * (int64_t)sizeof(type))) \
        < 0) {                                                                                     \
        goto error;                                                                                \
    }                                                                                              \
    PyTuple_SET_ITEM(records, i, rd->record_arrays[i]);                                            \
    rd->record_arrays[i] = NULL;                                                                   \
    i++;
    RECORD_COLUMNS(HAND_OVER_RECORD)
#undef HAND_OVER_RECORD
    i = 0;
#define HAND_OVER_BATCH(name, type)                                                                \
    if (PyByteArray_Resize(rd->batch_arrays[i], (Py_ssize_t)(rd->n_batches * (int64_t)sizeof(type))) \
        < 0) {                                                                                     \
        goto error;                                                                                \
    }                                                                                              \
    PyTuple_SET_ITEM(batches, i, rd->batch_arrays[i]);                                             \
    rd->batch_arrays[i] = NULL;                                                                    \
    i++;
    BATCH_COLUMNS(HAND_OVER_BATCH)
#undef HAND_OVER_BATCH
    PyObject *result = Py_BuildValue("(LLNLN)", (long long)rd->first_record,
                                     (long long)rd->n_records, records,
                                     (long long)rd->n_batches, batches);
    rd->first_record = rd->next_record;
    rd->n_records = 0;
    rd->n_batches = 0;
    /* The next chunk starts as big as this one grew: growing each chunk from nothing again
     * copied every column once over (realloc) and faulted in its pages twice. */
    int64_t rows = rd->capacity;
    rd->capacity = 0;
    if (reader_resize(rd, rows) < 0) {
        Py_XDECREF(result);
        return NULL;
    }
    return result;
error:
    Py_DECREF(records);
    Py_DECREF(batches);
    return NULL;
}

static PyObject *
Reader_pending(Reader *rd, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(rd->n_batches);
}

static PyObject *
Reader_ordinals(Reader *rd, PyObject *unused)
{
    (void)unused;
    return Py_BuildValue("(LL)", (long long)rd->next_ordinal, (long long)rd->next_record);
}

static PyMethodDef Reader_methods[] = {
    {"start", (PyCFunction)Reader_start, METH_VARARGS,
     "start(ordinal, record): segment numbers of the next entry and record."},
    {"take", (PyCFunction)Reader_take, METH_VARARGS,
     "take(window, start, end, file_position, buffer, max_entry_bytes) -> (next_rel, status)"},
    {"payload", (PyCFunction)Reader_payload, METH_NOARGS,
     "payload() -> (start, end, codec, magic) of the compressed entry waiting"},
    {"take_compressed", (PyCFunction)Reader_take_compressed, METH_VARARGS,
     "take_compressed(data, buffer) -> status"},
    {"flush", (PyCFunction)Reader_flush, METH_NOARGS,
     "flush() -> (first_record, n_records, record_columns, n_batches, batch_columns)"},
    {"ordinals", (PyCFunction)Reader_ordinals, METH_NOARGS,
     "ordinals() -> (next entry ordinal, next record ordinal)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Reader_getset[] = {
    {"pending_batches", (getter)Reader_pending, NULL, "entries in the chunk being built", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "offsets_auditor._native.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reader(strings, max_records=65536, simd_width=0): segment windows into columns.",
    .tp_methods = Reader_methods,
    .tp_getset = Reader_getset,
    .tp_new = Reader_new,
};

/* ------------------------------------------------------------ module functions -- */

static PyObject *
native_md5(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    unsigned char out[MD5_SIZE];
    md5_digest((const unsigned char *)view.buf, view.len, out);
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, MD5_SIZE);
}

/* md5_many(keys, width) -> list of digests, computed `width` at a time (tests). */
static PyObject *
native_md5_many(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *keys;
    int width;
    if (!PyArg_ParseTuple(args, "O!i:md5_many", &PyList_Type, &keys, &width)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(keys);
    Md5Job *jobs = (Md5Job *)PyMem_Calloc((size_t)(n ? n : 1), sizeof(Md5Job));
    unsigned char *out = (unsigned char *)PyMem_Calloc((size_t)(n ? n : 1), MD5_SIZE);
    PyObject *result = NULL;
    if (jobs == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "keys must be bytes");
            goto done;
        }
        jobs[i].key = (const unsigned char *)PyBytes_AS_STRING(key);
        jobs[i].len = PyBytes_GET_SIZE(key);
        jobs[i].out = out + MD5_SIZE * i;
    }
    md5_jobs(jobs, n, width);
    result = PyList_New(n);
    for (Py_ssize_t i = 0; result != NULL && i < n; i++) {
        PyObject *d = PyBytes_FromStringAndSize((const char *)out + MD5_SIZE * i, MD5_SIZE);
        if (d == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, d);
    }
done:
    PyMem_Free(jobs);
    PyMem_Free(out);
    return result;
}

static PyObject *
native_crc(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer view;
    int castagnoli;
    if (!PyArg_ParseTuple(args, "y*p:crc", &view, &castagnoli)) {
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    uint32_t crc = castagnoli ? crc32_castagnoli(p, view.len) : crc32_zlib(p, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *
native_simd_width(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromLong(md5_max_width());
}

/* map_put(ids, offsets, present, map_offsets, size, capacity) -> (stop, size, last_new):
 * the cleaner's offset map (cleaner/offset_map.py) taking the keys ids[i] (int32, dense, each
 * < len(present)) in order: before each one, if size >= capacity it stops there (the map is
 * full: the first record that finds it so, new key or not); else a key not yet present becomes
 * present (size + 1) and, when map_offsets is given, map_offsets[id] = offsets[i] (the last put
 * of a key wins). Returns where it stopped (n: it did not), the size after, and whether the
 * last key taken was new. One pass, no sort: Kafka's SkimpyOffsetMap.put, key by key. */
static PyObject *
native_map_put(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer ids, offsets = {0}, present, map_offsets = {0};
    PyObject *offsets_arg, *map_offsets_arg;
    long long size, capacity;
    if (!PyArg_ParseTuple(args, "y*Ow*OLL:map_put", &ids, &offsets_arg, &present, &map_offsets_arg,
                          &size, &capacity)) {
        return NULL;
    }
    PyObject *result = NULL;
    int have_offsets = offsets_arg != Py_None, have_map = map_offsets_arg != Py_None;
    if (have_offsets && PyObject_GetBuffer(offsets_arg, &offsets, PyBUF_SIMPLE) < 0) {
        have_offsets = 0;
        goto done;
    }
    if (have_map && PyObject_GetBuffer(map_offsets_arg, &map_offsets, PyBUF_WRITABLE) < 0) {
        have_map = 0;
        goto done;
    }
    Py_ssize_t n = ids.len / (Py_ssize_t)sizeof(int32_t);
    Py_ssize_t keys = present.len;
    if (ids.len % (Py_ssize_t)sizeof(int32_t) != 0 || have_map != have_offsets
        || (have_offsets && offsets.len < n * (Py_ssize_t)sizeof(int64_t))
        || (have_map && map_offsets.len < keys * (Py_ssize_t)sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError,
                        "map_put: ids int32; offsets an int64 per id and map_offsets an int64 per"
                        " key of present, both or neither");
        goto done;
    }
    const int32_t *id = (const int32_t *)ids.buf;
    unsigned char *seen = (unsigned char *)present.buf;
    const int64_t *off = have_offsets ? (const int64_t *)offsets.buf : NULL;
    int64_t *stored = have_map ? (int64_t *)map_offsets.buf : NULL;
    Py_ssize_t i = 0;
    int last_new = 0;
    for (; i < n; i++) {
        if (size >= capacity) {
            break;
        }
        int32_t k = id[i];
        if (k < 0 || (Py_ssize_t)k >= keys) {
            PyErr_Format(PyExc_IndexError, "map_put: key id %d out of [0, %zd)", (int)k, keys);
            goto done;
        }
        last_new = !seen[k];
        if (last_new) {
            seen[k] = 1;
            size++;
        }
        if (stored != NULL) {
            stored[k] = off[i];
        }
    }
    result = Py_BuildValue("nLO", i, size, last_new ? Py_True : Py_False);
done:
    PyBuffer_Release(&ids);
    PyBuffer_Release(&present);
    if (have_offsets) {
        PyBuffer_Release(&offsets);
    }
    if (have_map) {
        PyBuffer_Release(&map_offsets);
    }
    return result;
}

/* retain(batch, weight, offset, ids, keyed, tombstone, alive, batch_control, discard, dropped,
 *        map_offsets, latest_offset, legacy, from_found_offset, retain_deletes, sums)
 *   -> (invalid, tombstones_dropped, tombstones_kept, aborted_kept_empty)
 * The retention rules of one pass over one window of records (cleaner/retention.py says which
 * and why), in one sweep: `alive` (bool per record) becomes what survives; per batch, `sums`
 * (int64, 5 rows of one per batch) gets the live records and their weight before, the weight of
 * all records, and the kept records and their weight after. `dropped` batches lose every
 * record; the other `discard`ed ones (kept empty) too, counted as aborted; a key's stored
 * offset is map_offsets[id] (-1: none, or id -1). */
static PyObject *
native_retain(PyObject *module, PyObject *args)
{
    (void)module;
    enum { BATCH, WEIGHT, OFFSET, IDS, KEYED, TOMBSTONE, ALIVE, CONTROL, DISCARD, DROPPED, MAP,
           SUMS, N_VIEWS };
    Py_buffer v[N_VIEWS];
    memset(v, 0, sizeof v);
    long long latest;
    int legacy, from_found, retain_deletes;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*y*y*y*y*Lpppw*:retain", &v[BATCH], &v[WEIGHT],
                          &v[OFFSET], &v[IDS], &v[KEYED], &v[TOMBSTONE], &v[ALIVE], &v[CONTROL],
                          &v[DISCARD], &v[DROPPED], &v[MAP], &latest, &legacy, &from_found,
                          &retain_deletes, &v[SUMS])) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = v[BATCH].len / 4, nb = v[CONTROL].len, keys = v[MAP].len / 8;
    if (v[BATCH].len != 4 * n || v[WEIGHT].len != 4 * n || v[OFFSET].len != 8 * n
        || v[IDS].len != 4 * n || v[KEYED].len != n || v[TOMBSTONE].len != n || v[ALIVE].len != n
        || v[DISCARD].len != nb || v[DROPPED].len != nb || v[MAP].len != 8 * keys
        || v[SUMS].len != 5 * 8 * nb) {
        PyErr_SetString(PyExc_ValueError,
                        "retain: per record batch, weight, ids int32, offset int64, keyed,"
                        " tombstone, alive bool; per batch control, discard, dropped bool;"
                        " map_offsets int64; sums int64 of 5 x batches");
        goto done;
    }
    const int32_t *batch = (const int32_t *)v[BATCH].buf, *weight = (const int32_t *)v[WEIGHT].buf;
    const int32_t *ids = (const int32_t *)v[IDS].buf;
    const int64_t *offset = (const int64_t *)v[OFFSET].buf, *stored = (const int64_t *)v[MAP].buf;
    const unsigned char *keyed = v[KEYED].buf, *tombstone = v[TOMBSTONE].buf;
    const unsigned char *control = v[CONTROL].buf, *discard = v[DISCARD].buf;
    const unsigned char *dropped = v[DROPPED].buf;
    unsigned char *alive = v[ALIVE].buf;
    int64_t *sums = (int64_t *)v[SUMS].buf;
    int64_t *n_live = sums, *w_live = sums + nb, *w_all = sums + 2 * nb, *n_kept = sums + 3 * nb;
    int64_t *w_kept = sums + 4 * nb;
    memset(sums, 0, (size_t)(5 * nb) * sizeof(int64_t));
    long long invalid = 0, expired_count = 0, tombstones_kept = 0, aborted = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t b = batch[i];
        int32_t k = ids[i];
        if (b < 0 || (Py_ssize_t)b >= nb || (Py_ssize_t)k >= keys) {
            PyErr_Format(PyExc_IndexError, "retain: record %zd: batch %d of %zd, key id %d of %zd",
                         i, (int)b, nb, (int)k, keys);
            goto done;
        }
        int64_t w = weight[i];
        w_all[b] += w;
        if (!alive[i]) {
            continue;
        }
        n_live[b]++;
        w_live[b] += w;
        int keep = 0;
        if (dropped[b]) {
            keep = 0;
        }
        else if (discard[b]) {
            aborted++; /* kept as an empty batch: no rule applies, every record goes */
        }
        else if (!legacy && offset[i] > latest) {
            keep = 1; /* rule 1 */
        }
        else if (!keyed[i]) {
            invalid++; /* rule 2 */
        }
        else {
            int64_t found = k >= 0 && keys ? stored[k] : -1;
            int newer = offset[i] < found && (from_found || found >= 0); /* rule 3 */
            int expired = !newer && tombstone[i] && !retain_deletes;  /* rule 4 */
            expired_count += expired;
            keep = !newer && !expired;
        }
        if (keep && tombstone[i] && !control[b]) {
            tombstones_kept++;
        }
        alive[i] = (unsigned char)keep;
        if (keep) {
            n_kept[b]++;
            w_kept[b] += w;
        }
    }
    result = Py_BuildValue("LLLL", invalid, expired_count, tombstones_kept, aborted);
done:
    for (int j = 0; j < N_VIEWS; j++) {
        if (v[j].obj != NULL) {
            PyBuffer_Release(&v[j]);
        }
    }
    return result;
}

/* intern_all(names, ids, names_list, out) -> len(ids): each string of the sequence names
 * interned in the dict ids (str -> int, dense in first-seen order, names_list holding the
 * strings by id); its id written to out (int32). The loop of a Python dict lookup per name,
 * without the interpreter: the groups and topics of every segment are interned so. */
static PyObject *
native_intern_all(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *names, *ids, *list;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "OO!O!w*:intern_all", &names, &PyDict_Type, &ids, &PyList_Type,
                          &list, &out)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyObject *seq = PySequence_Fast(names, "intern_all: names must be a sequence");
    if (seq == NULL) {
        goto done;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (out.len < n * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "intern_all: out needs an int32 per name");
        goto done;
    }
    int32_t *o = (int32_t *)out.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_CheckExact(name)) {
            PyErr_SetString(PyExc_TypeError, "intern_all: names must be str");
            goto done;
        }
        PyObject *found = PyDict_GetItemWithError(ids, name); /* borrowed */
        long id;
        if (found != NULL) {
            id = PyLong_AsLong(found);
            if (id == -1 && PyErr_Occurred()) {
                goto done;
            }
        } else {
            if (PyErr_Occurred()) {
                goto done;
            }
            Py_ssize_t next = PyDict_GET_SIZE(ids);
            if (next > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "intern_all: more than 2^31 strings");
                goto done;
            }
            PyObject *value = PyLong_FromSsize_t(next);
            if (value == NULL) {
                goto done;
            }
            int failed = PyDict_SetItem(ids, name, value) < 0 || PyList_Append(list, name) < 0;
            Py_DECREF(value);
            if (failed) {
                goto done;
            }
            id = (long)next;
        }
        o[i] = (int32_t)id;
    }
    result = PyLong_FromSsize_t(PyDict_GET_SIZE(ids));
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef module_methods[] = {
    {"retain", native_retain, METH_VARARGS,
     "retain(...) -> (invalid, tombstones_dropped, tombstones_kept, aborted): one pass's"
     " retention rules over a window of records, in one sweep (cleaner/retention.py)"},
    {"md5", native_md5, METH_O, "md5(data) -> the 16-byte MD5 digest"},
    {"md5_many", native_md5_many, METH_VARARGS,
     "md5_many(keys, width) -> digests, `width` lanes at a time (16, 8 or 1)"},
    {"crc", native_crc, METH_VARARGS, "crc(data, castagnoli) -> CRC-32C if castagnoli else CRC-32"},
    {"intern_all", native_intern_all, METH_VARARGS,
     "intern_all(names, ids, names_list, out) -> count: str ids, dense in first-seen order"},
    {"map_put", native_map_put, METH_VARARGS,
     "map_put(ids, offsets, present, map_offsets, size, capacity) -> (stop, size, last_new)"},
    {"max_simd_width", native_simd_width, METH_NOARGS,
     "max_simd_width() -> 16 (AVX-512), 8 (AVX2) or 1: MD5 lanes the CPU offers"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "offsets_auditor._native",
    "The C record reader and interning tables (see offsets_auditor.reader).",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    kafka_crc_init();
    md5_init();
    if (PyType_Ready(&StringTableType) < 0 || PyType_Ready(&KeyTableType) < 0
        || PyType_Ready(&ReaderType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "StringTable", (PyObject *)&StringTableType) < 0
        || PyModule_AddObjectRef(module, "KeyTable", (PyObject *)&KeyTableType) < 0
        || PyModule_AddObjectRef(module, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
