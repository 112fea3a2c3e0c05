/*
 * binlogkit._eventcols: the header columns of a binlog's events, filled in C one batch at a time
 * (the ``events`` table of binlogkit.spark, docs/spark.md), without a Python object per event.
 *
 * An optional accelerator for binlogkit/spark/tables.py's ``_headers`` (the reference; the tests
 * hold both equal). A ``Cols`` object holds the column buffers of one batch: offset, type code,
 * timestamp, server id, event size, log_pos, flags, the checksum verdict and the GTID of the
 * transaction each event is in (Arrow string buffers: offsets and bytes). Its ``take`` is a
 * taker of the one framing loop (reading.framing.walk_events(taker=...)): handed the window
 * buf[rel:filled] that holds the stream from offset ``at``, it appends the whole events it
 * settles -- in the clear, CRC32 good when checksums are on (its own table-driven CRC32, the
 * zlib polynomial), not a Format_description, Start_encryption, Start_v3 or tagged GTID, a
 * header length of 19, a MariaDB GTID / MySQL GTID / anonymous GTID body that reads -- and stops
 * before any other event, at ``stop`` and when the batch is full; the Python path frames that
 * event and appends it with ``append`` (its GTID set through ``gtid``). ``finish`` hands the
 * buffers over as bytes and starts the next batch. It also keeps the least and greatest
 * timestamp seen and how many Transaction_payload events were met (spark/files.py's bounds
 * cache). Every read is bounds-checked against the window.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <structmember.h>

#include "_constants.h"

#define LEN_HEADER LEN_COMMON_HEADER
#define MAX_GNO ((1ULL << 63) - 2)
#define MAX_EVENT_SIZE ((1LL << 30) + (1LL << 16))

static uint32_t CRC_TABLE[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        CRC_TABLE[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            CRC_TABLE[t][i] = (CRC_TABLE[t - 1][i] >> 8) ^ CRC_TABLE[0][CRC_TABLE[t - 1][i] & 0xFF];
}

/* zlib's crc32(p[0:n]) by slicing-by-8 */
static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t a = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = CRC_TABLE[7][a & 0xFF] ^ CRC_TABLE[6][(a >> 8) & 0xFF] ^ CRC_TABLE[5][(a >> 16) & 0xFF] ^
            CRC_TABLE[4][a >> 24] ^ CRC_TABLE[3][p[4]] ^ CRC_TABLE[2][p[5]] ^ CRC_TABLE[1][p[6]] ^ CRC_TABLE[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = CRC_TABLE[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} Buf;

static int grow(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    char *p = PyMem_Realloc(b->p, cap);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static int put(Buf *b, const void *v, Py_ssize_t n) {
    if (grow(b, n))
        return -1;
    memcpy(b->p + b->len, v, n);
    b->len += n;
    return 0;
}

enum { C_OFFSET, C_CODE, C_TS, C_SID, C_SIZE, C_LOGPOS, C_FLAGS, C_OK, C_GOFF, C_GDATA, C_GVALID, NCOLS };
static const char *COL_NAMES[NCOLS] = {"offset", "type_code", "timestamp", "server_id", "event_size", "log_pos",
                                       "flags", "checksum_ok", "gtid_offsets", "gtid_data", "gtid_valid"};

typedef struct {
    PyObject_HEAD
    Buf c[NCOLS];
    Py_ssize_t n;           /* rows in the batch */
    Py_ssize_t capacity;    /* take stops when the batch holds this many */
    long long stop;         /* take stops at the first event at or after it (-1: never) */
    int header_length;      /* the format's; take settles only 19 */
    char gtid[96];          /* the GTID in force (text), for the rows after it */
    int glen;               /* its length; -1: none (null) */
    long long min_ts, max_ts, events, payloads;
} Cols;

static int add_row(Cols *C, long long at, int code, uint32_t ts, uint32_t sid, uint32_t size, uint32_t log_pos,
                   int flags, int ok) {
    int64_t v;
    int32_t i;
    unsigned char u;
    v = at;
    if (put(&C->c[C_OFFSET], &v, 8))
        return -1;
    i = code;
    if (put(&C->c[C_CODE], &i, 4))
        return -1;
    v = ts;
    if (put(&C->c[C_TS], &v, 8))
        return -1;
    v = sid;
    if (put(&C->c[C_SID], &v, 8))
        return -1;
    v = size;
    if (put(&C->c[C_SIZE], &v, 8))
        return -1;
    v = log_pos;
    if (put(&C->c[C_LOGPOS], &v, 8))
        return -1;
    i = flags;
    if (put(&C->c[C_FLAGS], &i, 4))
        return -1;
    u = (unsigned char)ok;
    if (put(&C->c[C_OK], &u, 1))
        return -1;
    if (C->glen > 0 && put(&C->c[C_GDATA], C->gtid, C->glen))
        return -1;
    i = (int32_t)C->c[C_GDATA].len;
    if (put(&C->c[C_GOFF], &i, 4))
        return -1;
    u = C->glen >= 0;
    if (put(&C->c[C_GVALID], &u, 1))
        return -1;
    C->n++;
    C->events++;
    if (C->min_ts < 0 || ts < C->min_ts)
        C->min_ts = ts;
    if ((long long)ts > C->max_ts)
        C->max_ts = ts;
    if (code == TRANSACTION_PAYLOAD_EVENT)
        C->payloads++;
    return 0;
}

static void reset(Cols *C) {
    for (int k = 0; k < NCOLS; k++)
        C->c[k].len = 0;
    C->n = 0;
    int32_t zero = 0;
    put(&C->c[C_GOFF], &zero, 4); /* room is there: the buffer was at least this long */
}

static const char HEXD[] = "0123456789abcdef";

/* the GTID text of a GTID event's body into C->gtid (glen -1: none); 0, or 1: not settled here */
static int read_gtid(Cols *C, int code, uint32_t sid, const unsigned char *b, Py_ssize_t nb) {
    if (code == GTID_EVENT) {
        if (nb < 12)
            return 1;
        C->glen = snprintf(C->gtid, sizeof C->gtid, "%u-%u-%llu", (unsigned)le(b + 8, 4), (unsigned)sid,
                           (unsigned long long)le(b, 8));
        return 0;
    }
    if (code == ANONYMOUS_GTID_LOG_EVENT) {
        C->glen = -1;
        return 0;
    }
    /* GTID_LOG_EVENT: flags, 16-byte uuid, gno */
    if (nb < 25) {
        C->glen = -1;
        return 0;
    }
    uint64_t gno = le(b + 17, 8);
    if (gno < 1 || gno > MAX_GNO)
        return 1; /* the Python path raises its FormatError */
    char *o = C->gtid;
    for (int k = 0; k < 16; k++) {
        if (k == 4 || k == 6 || k == 8 || k == 10)
            *o++ = '-';
        *o++ = HEXD[b[1 + k] >> 4];
        *o++ = HEXD[b[1 + k] & 15];
    }
    o += snprintf(o, 24, ":%llu", (unsigned long long)gno);
    C->glen = (int)(o - C->gtid);
    return 0;
}

/* take(buf, rel, filled, at, crc_on) -> (rel, at): the events it settles appended */
static PyObject *cols_take(Cols *C, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t rel, filled;
    long long at;
    int crc_on;
    if (!PyArg_ParseTuple(args, "w*nnLp", &buf, &rel, &filled, &at, &crc_on))
        return NULL;
    if (rel < 0 || filled > buf.len || rel > filled) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "take: window out of the buffer");
        return NULL;
    }
    const unsigned char *w = buf.buf;
    int len_crc = crc_on ? 4 : 0;
    int err = 0;
    while (C->header_length == LEN_HEADER && C->n < C->capacity) {
        Py_ssize_t avail = filled - rel;
        if (avail < LEN_HEADER)
            break;
        const unsigned char *h = w + rel;
        uint32_t ts = (uint32_t)le(h, 4), sid = (uint32_t)le(h + 5, 4), size = (uint32_t)le(h + 9, 4);
        uint32_t log_pos = (uint32_t)le(h + 13, 4);
        int code = h[4], flags = (int)le(h + 17, 2);
        if (size < (uint32_t)(LEN_HEADER + len_crc) || (long long)size > MAX_EVENT_SIZE || size > avail)
            break;
        if (C->stop >= 0 && at >= C->stop)
            break;
        if (code == FORMAT_DESCRIPTION_EVENT || code == START_ENCRYPTION_EVENT || code == START_EVENT_V3 ||
            code == GTID_TAGGED_LOG_EVENT)
            break;
        int ok = 2; /* null: no checksum */
        if (crc_on) {
            if (crc32_of(h, size - 4) != (uint32_t)le(h + size - 4, 4))
                break; /* the Python path reports or raises it */
            ok = 1;
        }
        if (code == GTID_EVENT || code == GTID_LOG_EVENT || code == ANONYMOUS_GTID_LOG_EVENT) {
            char keep[sizeof C->gtid];
            int keep_len = C->glen;
            memcpy(keep, C->gtid, sizeof keep);
            if (read_gtid(C, code, sid, h + LEN_HEADER, size - LEN_HEADER - len_crc)) {
                memcpy(C->gtid, keep, sizeof keep);
                C->glen = keep_len;
                break;
            }
        }
        if (add_row(C, at, code, ts, sid, size, log_pos, flags, ok)) {
            err = 1;
            break;
        }
        rel += size;
        at += size;
    }
    PyBuffer_Release(&buf);
    if (err)
        return NULL;
    return Py_BuildValue("(nL)", rel, at);
}

/* append(at, code, ts, sid, size, log_pos, flags, ok): one event the Python path framed */
static PyObject *cols_append(Cols *C, PyObject *args) {
    long long at;
    int code, flags;
    unsigned long ts, sid, size, log_pos;
    PyObject *ok;
    if (!PyArg_ParseTuple(args, "LikkkkiO", &at, &code, &ts, &sid, &size, &log_pos, &flags, &ok))
        return NULL;
    int v = ok == Py_None ? 2 : PyObject_IsTrue(ok);
    if (v < 0)
        return NULL;
    if (add_row(C, at, code, (uint32_t)ts, (uint32_t)sid, (uint32_t)size, (uint32_t)log_pos, flags, v))
        return NULL;
    Py_RETURN_NONE;
}

/* finish() -> (n, {name: bytes}): the batch's buffers; the next batch starts empty */
static PyObject *cols_finish(Cols *C, PyObject *Py_UNUSED(ignored)) {
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    for (int k = 0; k < NCOLS; k++) {
        PyObject *b = PyBytes_FromStringAndSize(C->c[k].p ? C->c[k].p : "", C->c[k].len);
        if (!b || PyDict_SetItemString(d, COL_NAMES[k], b)) {
            Py_XDECREF(b);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(b);
    }
    PyObject *out = Py_BuildValue("(nN)", C->n, d);
    reset(C);
    return out;
}

static PyObject *cols_get_gtid(Cols *C, void *Py_UNUSED(closure)) {
    if (C->glen < 0)
        Py_RETURN_NONE;
    return PyUnicode_DecodeASCII(C->gtid, C->glen, "strict");
}

static int cols_set_gtid(Cols *C, PyObject *v, void *Py_UNUSED(closure)) {
    if (v == NULL || v == Py_None) {
        C->glen = -1;
        return 0;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(v, &n);
    if (!s)
        return -1;
    if (n >= (Py_ssize_t)sizeof C->gtid) {
        PyErr_SetString(PyExc_ValueError, "gtid: longer than 95 bytes");
        return -1;
    }
    memcpy(C->gtid, s, n);
    C->glen = (int)n;
    return 0;
}

static PyObject *cols_bounds(Cols *C, PyObject *Py_UNUSED(ignored)) {
    return Py_BuildValue("(LLLL)", C->events, C->min_ts, C->max_ts, C->payloads);
}

static PyObject *cols_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"capacity", NULL};
    Py_ssize_t capacity;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "n", kwlist, &capacity))
        return NULL;
    if (capacity < 1) {
        PyErr_SetString(PyExc_ValueError, "capacity: at least 1");
        return NULL;
    }
    Cols *C = (Cols *)type->tp_alloc(type, 0);
    if (!C)
        return NULL;
    C->capacity = capacity;
    C->stop = -1;
    C->header_length = LEN_HEADER;
    C->glen = -1;
    C->min_ts = -1;
    C->max_ts = -1;
    if (grow(&C->c[C_GOFF], 4)) {
        Py_DECREF(C);
        return NULL;
    }
    reset(C);
    return (PyObject *)C;
}

static void cols_dealloc(Cols *C) {
    for (int k = 0; k < NCOLS; k++)
        PyMem_Free(C->c[k].p);
    Py_TYPE(C)->tp_free((PyObject *)C);
}

static Py_ssize_t cols_len(Cols *C) { return C->n; }

static PyMemberDef cols_members[] = {
    {"stop", T_LONGLONG, offsetof(Cols, stop), 0, "take stops at the first event at or after it (-1: never)"},
    {"header_length", T_INT, offsetof(Cols, header_length), 0, "the format's common header length"},
    {"capacity", T_PYSSIZET, offsetof(Cols, capacity), 0, "rows in a full batch"},
    {NULL}};

static PyGetSetDef cols_getset[] = {
    {"gtid", (getter)cols_get_gtid, (setter)cols_set_gtid, "the GTID in force (None: none)", NULL}, {NULL}};

static PyMethodDef cols_methods[] = {
    {"take", (PyCFunction)cols_take, METH_VARARGS, "take(buf, rel, filled, at, crc_on) -> (rel, at)"},
    {"append", (PyCFunction)cols_append, METH_VARARGS, "append(at, code, ts, sid, size, log_pos, flags, ok)"},
    {"finish", (PyCFunction)cols_finish, METH_NOARGS, "finish() -> (n, {column: bytes})"},
    {"bounds", (PyCFunction)cols_bounds, METH_NOARGS,
     "bounds() -> (events, least timestamp, greatest timestamp, Transaction_payload events) so far"},
    {NULL}};

static PySequenceMethods cols_seq = {.sq_length = (lenfunc)cols_len};

static PyTypeObject ColsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._eventcols.Cols",
    .tp_basicsize = sizeof(Cols),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The header columns of one batch of events (see the module's doc).",
    .tp_new = cols_new,
    .tp_dealloc = (destructor)cols_dealloc,
    .tp_methods = cols_methods,
    .tp_members = cols_members,
    .tp_getset = cols_getset,
    .tp_as_sequence = &cols_seq,
};

static PyObject *crc32_py(PyObject *self, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    uint32_t c = crc32_of(b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

static PyMethodDef module_methods[] = {{"crc32", crc32_py, METH_VARARGS, "crc32(bytes) -> zlib's CRC32"}, {NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_eventcols", "Event header columns in C.", -1,
                                    module_methods};

PyMODINIT_FUNC PyInit__eventcols(void) {
    crc_init();
    if (PyType_Ready(&ColsType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&ColsType);
    if (PyModule_AddObject(m, "Cols", (PyObject *)&ColsType) < 0) {
        Py_DECREF(&ColsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
