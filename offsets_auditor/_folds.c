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

static PyMethodDef module_methods[] = {
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
