/* offsets_auditor._folds: the per-record folds of a chunk's columns, one pass each, where numpy
 * took a pass per step (a gather, a mask, a ufunc.at) over every record.
 *
 * Each function reads columns the reader made (offsets_auditor/reader/columns.py says what
 * each holds) and adds into state columns its Python caller owns and sizes (numpy arrays,
 * passed as buffers). The rules stay where they are documented: the callers' docstrings say
 * what is folded and why; these are their loops.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Whether `view` holds `count` items of `size` bytes; else a ValueError naming `what`. */
static int
holds(const Py_buffer *view, Py_ssize_t count, Py_ssize_t size, const char *what)
{
    if (view->len != count * size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd items of %zd", what,
                     view->len, count, size);
        return 0;
    }
    return 1;
}

/* writer_rows(group, batch, batch_control, batch_records, row_of_count, rows) -> (rows, used)
 *
 * The writers' rows of one chunk (cleaner/segment_facts.py, _SegmentWriters): a record writes
 * when its key starts with a group id (group >= 0) and its batch is no control batch. Each
 * count of records in a batch whose records write gets a row of the shares table:
 * row_of_count[count] (int32, -1: none yet) is set to the next row, from `rows` on, for each
 * count seen first here. Returns the rows after, and each batch's row (int32; -1 for a batch
 * none of whose records write). */
static PyObject *
folds_writer_rows(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer group, batch, control, records, row_of_count;
    long long rows;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*L:writer_rows", &group, &batch, &control, &records,
                          &row_of_count, &rows)) {
        return NULL;
    }
    PyObject *result = NULL, *used = NULL;
    Py_ssize_t n = group.len / 4, nb = control.len, counts = row_of_count.len / 4;
    if (!holds(&group, n, 4, "writer_rows: group int32") ||
        !holds(&batch, n, 4, "writer_rows: batch int32") ||
        !holds(&records, nb, 4, "writer_rows: batch_records int32") ||
        !holds(&row_of_count, counts, 4, "writer_rows: row_of_count int32")) {
        goto done;
    }
    used = PyByteArray_FromStringAndSize(NULL, nb * 4);
    if (used == NULL) {
        goto done;
    }
    int32_t *row = (int32_t *)PyByteArray_AS_STRING(used);
    for (Py_ssize_t b = 0; b < nb; b++) {
        row[b] = -1;
    }
    const int32_t *g = (const int32_t *)group.buf, *bi = (const int32_t *)batch.buf;
    const int8_t *ctl = (const int8_t *)control.buf;
    const int32_t *count = (const int32_t *)records.buf;
    int32_t *row_of = (int32_t *)row_of_count.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t b = bi[i];
        if (g[i] < 0) {
            continue;
        }
        if (b < 0 || b >= nb) {
            PyErr_Format(PyExc_IndexError, "writer_rows: record %zd: batch %d of %zd", i, (int)b,
                         nb);
            goto done;
        }
        if (row[b] >= 0 || ctl[b]) {
            continue;
        }
        int32_t c = count[b];
        if (c < 0 || c >= counts) {
            PyErr_Format(PyExc_IndexError, "writer_rows: batch %d: %d records, counts up to %zd",
                         (int)b, (int)c, counts - 1);
            goto done;
        }
        if (row_of[c] < 0) {
            row_of[c] = (int32_t)rows++;
        }
        row[b] = row_of[c];
    }
    result = Py_BuildValue("LO", rows, used);
done:
    Py_XDECREF(used);
    PyBuffer_Release(&group);
    PyBuffer_Release(&batch);
    PyBuffer_Release(&control);
    PyBuffer_Release(&records);
    PyBuffer_Release(&row_of_count);
    return result;
}

/* writers_add(group, batch, batch_row, batch_size, timestamp, seen,
 *             records, first_seen, first_timestamp, last_timestamp, sums) -> seen
 *
 * One chunk's writes added, record by record in file order, for the records whose batch has a
 * row (writer_rows): per group string id, records + 1; first_seen (-1: none yet) the position
 * of its first write (counting writes from `seen` on); first_timestamp and last_timestamp the
 * least and greatest known commit time (timestamp >= 0); and sums[row * capacity + id] + the
 * batch's size, `capacity` being the state columns' length. Returns the writes counted after. */
static PyObject *
folds_writers_add(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer group, batch, batch_row, batch_size, timestamp;
    Py_buffer records, first_seen, first_timestamp, last_timestamp, sums;
    long long seen;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*Lw*w*w*w*w*:writers_add", &group, &batch, &batch_row,
                          &batch_size, &timestamp, &seen, &records, &first_seen,
                          &first_timestamp, &last_timestamp, &sums)) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = group.len / 4, nb = batch_row.len / 4, capacity = records.len / 8;
    Py_ssize_t cells = sums.len / 8;
    if (!holds(&group, n, 4, "writers_add: group int32") ||
        !holds(&batch, n, 4, "writers_add: batch int32") ||
        !holds(&batch_row, nb, 4, "writers_add: batch_row int32") ||
        !holds(&batch_size, nb, 8, "writers_add: batch_size int64") ||
        !holds(&timestamp, n, 8, "writers_add: timestamp int64") ||
        !holds(&first_seen, capacity, 8, "writers_add: first_seen int64") ||
        !holds(&first_timestamp, capacity, 8, "writers_add: first_timestamp int64") ||
        !holds(&last_timestamp, capacity, 8, "writers_add: last_timestamp int64") ||
        !holds(&sums, cells, 8, "writers_add: sums int64") ||
        (capacity && cells % capacity != 0)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "writers_add: sums is rows x capacity");
        }
        goto done;
    }
    const int32_t *g = (const int32_t *)group.buf, *bi = (const int32_t *)batch.buf;
    const int32_t *row = (const int32_t *)batch_row.buf;
    const int64_t *size = (const int64_t *)batch_size.buf, *ts = (const int64_t *)timestamp.buf;
    int64_t *count = (int64_t *)records.buf, *first = (int64_t *)first_seen.buf;
    int64_t *low = (int64_t *)first_timestamp.buf, *high = (int64_t *)last_timestamp.buf;
    int64_t *sum = (int64_t *)sums.buf;
    Py_ssize_t rows = capacity ? cells / capacity : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = g[i], b = bi[i];
        if (id < 0) {
            continue;
        }
        if (b < 0 || b >= nb) {
            PyErr_Format(PyExc_IndexError, "writers_add: record %zd: batch %d of %zd", i, (int)b,
                         nb);
            goto done;
        }
        int32_t r = row[b];
        if (r < 0) {
            continue;
        }
        if (id >= capacity || r >= rows) {
            PyErr_Format(PyExc_IndexError, "writers_add: record %zd: group %d, row %d past %zd x %zd",
                         i, (int)id, (int)r, rows, capacity);
            goto done;
        }
        count[id]++;
        if (first[id] < 0) {
            first[id] = seen;
        }
        seen++;
        int64_t t = ts[i];
        if (t >= 0) {
            if (t < low[id]) {
                low[id] = t;
            }
            if (t > high[id]) {
                high[id] = t;
            }
        }
        sum[(Py_ssize_t)r * capacity + id] += size[b];
    }
    result = PyLong_FromLongLong(seen);
done:
    PyBuffer_Release(&group);
    PyBuffer_Release(&batch);
    PyBuffer_Release(&batch_row);
    PyBuffer_Release(&batch_size);
    PyBuffer_Release(&timestamp);
    PyBuffer_Release(&records);
    PyBuffer_Release(&first_seen);
    PyBuffer_Release(&first_timestamp);
    PyBuffer_Release(&last_timestamp);
    PyBuffer_Release(&sums);
    return result;
}

/* A new bytearray of `n` int64s; NULL with an exception on failure. */
static PyObject *
int64s(Py_ssize_t n)
{
    return PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
}

/* The key statuses and value statuses of reader/columns.py (KeyStatus, ValueStatus). */
enum { KEY_OK = 0 };
enum { VALUE_DEFERRED = 1 };
/* commit_rows' per-batch states. */
enum { BATCH_PLAIN = 0, BATCH_APART = 1, BATCH_UNREAD = 2 };

/* commit_rows(batch, offset, key_status, value_status, topic, batch_state, end_offset)
 *   -> (plain, others, first_read, last_batch, log_end)
 *
 * Which records of one chunk the coordinator's loader reads, and how (groups/delta.py,
 * DeltaBuilder): a record is read unless its batch is unread (batch_state 2: it ends below the
 * load's start) or its offset is at or past end_offset. A read record is plain when its batch
 * is plain (state 0: no control batch, no transaction by the rules) and it is an offset commit
 * whose key and value the reader decoded (key_status OK, a topic, value_status not DEFERRED);
 * every other read record is taken one by one. Returns the plain rows and the other read rows
 * (int64, in order), per batch the offset of its first read record (int64, -1: none), the
 * batch of the last read record (-1: none) and the greatest read offset + 1 (0: none). */
static PyObject *
folds_commit_rows(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer batch, offset, key_status, value_status, topic, batch_state;
    long long end_offset;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*L:commit_rows", &batch, &offset, &key_status,
                          &value_status, &topic, &batch_state, &end_offset)) {
        return NULL;
    }
    PyObject *result = NULL, *plain = NULL, *others = NULL, *first = NULL;
    Py_ssize_t n = batch.len / 4, nb = batch_state.len;
    if (!holds(&batch, n, 4, "commit_rows: batch int32") ||
        !holds(&offset, n, 8, "commit_rows: offset int64") ||
        !holds(&key_status, n, 1, "commit_rows: key_status int8") ||
        !holds(&value_status, n, 1, "commit_rows: value_status int8") ||
        !holds(&topic, n, 4, "commit_rows: topic int32")) {
        goto done;
    }
    plain = int64s(n);
    others = int64s(n);
    first = int64s(nb);
    if (plain == NULL || others == NULL || first == NULL) {
        goto done;
    }
    const int32_t *bi = (const int32_t *)batch.buf, *tp = (const int32_t *)topic.buf;
    const int64_t *off = (const int64_t *)offset.buf;
    const int8_t *ks = (const int8_t *)key_status.buf, *vs = (const int8_t *)value_status.buf;
    const int8_t *state = (const int8_t *)batch_state.buf;
    int64_t *p = (int64_t *)PyByteArray_AS_STRING(plain);
    int64_t *o = (int64_t *)PyByteArray_AS_STRING(others);
    int64_t *f = (int64_t *)PyByteArray_AS_STRING(first);
    for (Py_ssize_t b = 0; b < nb; b++) {
        f[b] = -1;
    }
    Py_ssize_t n_plain = 0, n_others = 0;
    long long last_batch = -1, log_end = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t b = bi[i];
        if (b < 0 || b >= nb) {
            PyErr_Format(PyExc_IndexError, "commit_rows: record %zd: batch %d of %zd", i, (int)b,
                         nb);
            goto done;
        }
        if (state[b] == BATCH_UNREAD || off[i] >= end_offset) {
            continue;
        }
        if (f[b] < 0) {
            f[b] = off[i];
        }
        last_batch = b;
        if (off[i] + 1 > log_end) {
            log_end = off[i] + 1;
        }
        if (state[b] == BATCH_PLAIN && ks[i] == KEY_OK && tp[i] >= 0 && vs[i] != VALUE_DEFERRED) {
            p[n_plain++] = i;
        }
        else {
            o[n_others++] = i;
        }
    }
    if (PyByteArray_Resize(plain, n_plain * 8) < 0 || PyByteArray_Resize(others, n_others * 8) < 0) {
        goto done;
    }
    result = Py_BuildValue("OOOLL", plain, others, first, last_batch, log_end);
done:
    Py_XDECREF(plain);
    Py_XDECREF(others);
    Py_XDECREF(first);
    PyBuffer_Release(&batch);
    PyBuffer_Release(&offset);
    PyBuffer_Release(&key_status);
    PyBuffer_Release(&value_status);
    PyBuffer_Release(&topic);
    PyBuffer_Release(&batch_state);
    return result;
}

/* commit_keys(rows, group, topic, partition, names) -> packed
 *
 * The key of each of `rows` (int64) as the loader keys its offsets, by name: 16 bytes each,
 * int32 (name id of its group, name id of its topic, partition, 0), `names` (int32) giving the
 * name id of each string id, for interning in a _native.KeyTable. */
static PyObject *
folds_commit_keys(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer rows, group, topic, partition, names;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*:commit_keys", &rows, &group, &topic, &partition,
                          &names)) {
        return NULL;
    }
    PyObject *result = NULL, *packed = NULL;
    Py_ssize_t n = rows.len / 8, records = group.len / 4, strings = names.len / 4;
    if (!holds(&rows, n, 8, "commit_keys: rows int64") ||
        !holds(&group, records, 4, "commit_keys: group int32") ||
        !holds(&topic, records, 4, "commit_keys: topic int32") ||
        !holds(&partition, records, 4, "commit_keys: partition int32") ||
        !holds(&names, strings, 4, "commit_keys: names int32")) {
        goto done;
    }
    packed = PyByteArray_FromStringAndSize(NULL, n * 16);
    if (packed == NULL) {
        goto done;
    }
    const int64_t *row = (const int64_t *)rows.buf;
    const int32_t *g = (const int32_t *)group.buf, *t = (const int32_t *)topic.buf;
    const int32_t *part = (const int32_t *)partition.buf, *name = (const int32_t *)names.buf;
    int32_t *key = (int32_t *)PyByteArray_AS_STRING(packed);
    for (Py_ssize_t j = 0; j < n; j++) {
        int64_t i = row[j];
        if (i < 0 || i >= records || g[i] < 0 || g[i] >= strings || t[i] < 0 || t[i] >= strings
            || name[g[i]] < 0 || name[t[i]] < 0) {
            PyErr_Format(PyExc_IndexError, "commit_keys: row %lld: no named group and topic",
                         (long long)i);
            goto done;
        }
        key[4 * j] = name[g[i]];
        key[4 * j + 1] = name[t[i]];
        key[4 * j + 2] = part[i];
        key[4 * j + 3] = 0;
    }
    result = Py_NewRef(packed);
done:
    Py_XDECREF(packed);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&group);
    PyBuffer_Release(&topic);
    PyBuffer_Release(&partition);
    PyBuffer_Release(&names);
    return result;
}

/* latest(ids, log_offset, stored, last) -> (keys, winners)
 *
 * Each key's latest record among candidates in record order (ids: int32 key id of each,
 * log_offset: int64 its offset), kept when later than the key's stored offset (stored: int64 per
 * key id, -1: none): the keys (int64) and the candidate each keeps (int64, an index into the
 * candidates), in order of those candidates. `last` is scratch, an int32 per key id, all -1,
 * and left so. */
static PyObject *
folds_latest(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer ids, log_offset, stored, last;
    if (!PyArg_ParseTuple(args, "y*y*y*w*:latest", &ids, &log_offset, &stored, &last)) {
        return NULL;
    }
    PyObject *result = NULL, *keys = NULL, *winners = NULL;
    Py_ssize_t n = ids.len / 4, capacity = stored.len / 8;
    if (!holds(&ids, n, 4, "latest: ids int32") ||
        !holds(&log_offset, n, 8, "latest: log_offset int64") ||
        !holds(&stored, capacity, 8, "latest: stored int64") ||
        !holds(&last, capacity, 4, "latest: last int32 per stored")) {
        goto done;
    }
    const int32_t *id = (const int32_t *)ids.buf;
    const int64_t *off = (const int64_t *)log_offset.buf, *have = (const int64_t *)stored.buf;
    int32_t *at = (int32_t *)last.buf;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (id[j] < 0 || id[j] >= capacity) {
            for (Py_ssize_t k = 0; k < j; k++) {
                at[id[k]] = -1;
            }
            PyErr_Format(PyExc_IndexError, "latest: key id %d of %zd", (int)id[j], capacity);
            goto done;
        }
        at[id[j]] = (int32_t)j;
    }
    keys = int64s(n);
    winners = int64s(n);
    if (keys == NULL || winners == NULL) {
        for (Py_ssize_t j = 0; j < n; j++) {
            at[id[j]] = -1;
        }
        goto done;
    }
    int64_t *k = (int64_t *)PyByteArray_AS_STRING(keys);
    int64_t *w = (int64_t *)PyByteArray_AS_STRING(winners);
    Py_ssize_t found = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (at[id[j]] == (int32_t)j && off[j] > have[id[j]]) {
            k[found] = id[j];
            w[found++] = j;
        }
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        at[id[j]] = -1;
    }
    if (PyByteArray_Resize(keys, found * 8) < 0 || PyByteArray_Resize(winners, found * 8) < 0) {
        goto done;
    }
    result = Py_BuildValue("OO", keys, winners);
done:
    Py_XDECREF(keys);
    Py_XDECREF(winners);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&log_offset);
    PyBuffer_Release(&stored);
    PyBuffer_Release(&last);
    return result;
}

static PyMethodDef module_methods[] = {
    {"commit_rows", folds_commit_rows, METH_VARARGS,
     "commit_rows(batch, offset, key_status, value_status, topic, batch_state, end_offset) ->"
     " (plain, others, first_read, last_batch, log_end): what the loader reads of a chunk"},
    {"commit_keys", folds_commit_keys, METH_VARARGS,
     "commit_keys(rows, group, topic, partition, names) -> packed: each row's key by name"},
    {"latest", folds_latest, METH_VARARGS,
     "latest(ids, log_offset, stored, last) -> (keys, winners): each key's latest candidate"
     " later than what it holds"},
    {"writer_rows", folds_writer_rows, METH_VARARGS,
     "writer_rows(group, batch, batch_control, batch_records, row_of_count, rows) -> (rows,"
     " batch_row): the shares table's row of each batch whose records write"},
    {"writers_add", folds_writers_add, METH_VARARGS,
     "writers_add(group, batch, batch_row, batch_size, timestamp, seen, records, first_seen,"
     " first_timestamp, last_timestamp, sums) -> seen: one chunk's writes added"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "offsets_auditor._folds",
    .m_doc = "The per-record folds of a chunk's columns (see offsets_auditor/_folds.c).",
    .m_size = 0,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__folds(void)
{
    return PyModule_Create(&module_def);
}
