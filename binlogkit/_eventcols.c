/*
 * binlogkit._eventcols: the header columns of a binlog's events, filled in C one batch at a time
 * (the ``events`` table of binlogkit.spark, docs/spark.md), without a Python object per event.
 *
 * An optional accelerator for binlogkit/spark/events.py's ``_headers`` (the reference; the tests
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
 *
 * ``JsonCols`` (below) fills the same table with decoded fields from the C decoder's JSON lines;
 * ``Run`` (below) is the transaction walk's taker: the events inside a transaction and whole
 * plain transactions, taken in C for binlogkit.transactions.Grouper and the ``transactions``
 * table.
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
/* {name: bytes} of a batch's column buffers (what finish() hands to Python) */
static PyObject *columns_dict(const Buf *c, int ncols, const char *const *names) {
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    for (int k = 0; k < ncols; k++) {
        PyObject *b = PyBytes_FromStringAndSize(c[k].p ? c[k].p : "", c[k].len);
        if (!b || PyDict_SetItemString(d, names[k], b)) {
            Py_XDECREF(b);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(b);
    }
    return d;
}

/* The GTID in force, held as text in a 96-byte field with its length (-1: none): the
   ``gtid`` attribute of both builders */
#define GTID_CAP 96

static PyObject *gtid_get(const char *gtid, int glen) {
    if (glen < 0)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(gtid, glen, "strict");
}

static int gtid_set(char *gtid, int *glen, PyObject *v) {
    if (v == NULL || v == Py_None) {
        *glen = -1;
        return 0;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(v, &n);
    if (!s)
        return -1;
    if (n >= GTID_CAP) {
        PyErr_SetString(PyExc_ValueError, "gtid: longer than 95 bytes");
        return -1;
    }
    memcpy(gtid, s, n);
    *glen = (int)n;
    return 0;
}

static const char *const COL_NAMES[NCOLS] = {"offset", "type_code", "timestamp", "server_id", "event_size", "log_pos",
                                       "flags", "checksum_ok", "gtid_offsets", "gtid_data", "gtid_valid"};

typedef struct {
    PyObject_HEAD
    Buf c[NCOLS];
    Py_ssize_t n;           /* rows in the batch */
    Py_ssize_t capacity;    /* take stops when the batch holds this many */
    long long stop;         /* take stops at the first event at or after it (-1: never) */
    int header_length;      /* the format's; take settles only 19 */
    char gtid[GTID_CAP];    /* the GTID in force (text), for the rows after it */
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
    PyObject *d = columns_dict(C->c, NCOLS, COL_NAMES);
    if (!d)
        return NULL;
    PyObject *out = Py_BuildValue("(nN)", C->n, d);
    reset(C);
    return out;
}

static PyObject *cols_get_gtid(Cols *C, void *Py_UNUSED(closure)) {
    return gtid_get(C->gtid, C->glen);
}

static int cols_set_gtid(Cols *C, PyObject *v, void *Py_UNUSED(closure)) {
    return gtid_set(C->gtid, &C->glen, v);
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

/* ---- JsonCols: the events table with its decoded fields, from the C decoder's JSON lines ------------------
 *
 * ``lines(text)`` takes the JSON lines binlogkit._fastdecode renders for `decode --json` (one object
 * per event: file, offset, end_offset, type, type_code, name, timestamp, server_id, event_size,
 * log_pos, flags, checksum_ok, [payload_offset, inner_offset,] fields) and appends each as a row:
 * numbers parsed, ``name`` and ``fields`` kept as their JSON text (fields: the object's bytes as
 * rendered), the GTID in force updated from a GTID event's ``fields.gtid``. ``append`` takes an
 * event the Python path decoded. A line that does not scan is a ValueError (nothing appended). */

enum { J_OFFSET, J_END, J_CODE, J_TS, J_SID, J_SIZE, J_LOGPOS, J_FLAGS, J_OK, J_POFF, J_PVALID, J_IOFF, J_IVALID,
       J_NOFF, J_NDATA, J_FOFF, J_FDATA, J_GOFF, J_GDATA, J_GVALID, JCOLS };
static const char *const JCOL_NAMES[JCOLS] = {"offset", "end_offset", "type_code", "timestamp", "server_id", "event_size",
                                        "log_pos", "flags", "checksum_ok", "payload_offset", "payload_valid",
                                        "inner_offset", "inner_valid", "name_offsets", "name_data", "fields_offsets",
                                        "fields_data", "gtid_offsets", "gtid_data", "gtid_valid"};

typedef struct {
    PyObject_HEAD
    Buf c[JCOLS];
    Py_ssize_t n;
    char gtid[GTID_CAP];
    int glen;
} JsonCols;

static void j_reset(JsonCols *J) {
    for (int k = 0; k < JCOLS; k++)
        J->c[k].len = 0;
    J->n = 0;
    int32_t zero = 0;
    put(&J->c[J_NOFF], &zero, 4);
    put(&J->c[J_FOFF], &zero, 4);
    put(&J->c[J_GOFF], &zero, 4);
}

typedef struct {
    long long offset, end, ts, sid, size, logpos, poff, ioff;
    int code, flags, ok, have_poff, have_ioff;
    const char *name, *fields;
    Py_ssize_t nname, nfields;
} Row;

static int j_add(JsonCols *J, const Row *r) {
    int64_t v;
    int32_t i;
    unsigned char u;
#define P8(col, x) (v = (x), put(&J->c[col], &v, 8))
#define P4(col, x) (i = (x), put(&J->c[col], &i, 4))
#define P1(col, x) (u = (unsigned char)(x), put(&J->c[col], &u, 1))
    if (P8(J_OFFSET, r->offset) || P8(J_END, r->end) || P4(J_CODE, r->code) || P8(J_TS, r->ts) ||
        P8(J_SID, r->sid) || P8(J_SIZE, r->size) || P8(J_LOGPOS, r->logpos) || P4(J_FLAGS, r->flags) ||
        P1(J_OK, r->ok) || P8(J_POFF, r->have_poff ? r->poff : 0) || P1(J_PVALID, r->have_poff) ||
        P8(J_IOFF, r->have_ioff ? r->ioff : 0) || P1(J_IVALID, r->have_ioff))
        return -1;
    if (put(&J->c[J_NDATA], r->name, r->nname) || P4(J_NOFF, (int32_t)J->c[J_NDATA].len))
        return -1;
    if (put(&J->c[J_FDATA], r->fields, r->nfields) || P4(J_FOFF, (int32_t)J->c[J_FDATA].len))
        return -1;
    if ((J->glen > 0 && put(&J->c[J_GDATA], J->gtid, J->glen)) || P4(J_GOFF, (int32_t)J->c[J_GDATA].len) ||
        P1(J_GVALID, J->glen >= 0))
        return -1;
#undef P8
#undef P4
#undef P1
    if (J->c[J_FDATA].len > INT32_MAX || J->c[J_NDATA].len > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "JsonCols: a batch over 2 GiB of text");
        return -1;
    }
    J->n++;
    return 0;
}

/* the end of the JSON value at p (< e); NULL: it does not scan */
static const char *skip_value(const char *p, const char *e) {
    if (p >= e)
        return NULL;
    if (*p == '"') {
        for (p++; p < e; p++) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < e; p++) {
            if (*p == '"') {
                const char *q = skip_value(p, e);
                if (!q)
                    return NULL;
                p = q - 1;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
        }
        return NULL;
    }
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
        p++;
    return p;
}

static int num(const char *p, const char *e, long long *out) {
    long long v = 0;
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= e)
        return -1;
    for (; p < e; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static int key_is(const char *k, Py_ssize_t n, const char *want) {
    return (Py_ssize_t)strlen(want) == n && memcmp(k, want, n) == 0;
}

/* the top-level "gtid" string of a fields object into J->gtid (glen -1: absent, null or not a string) */
static int fields_gtid(JsonCols *J, const char *p, const char *e) {
    J->glen = -1;
    if (p >= e || *p != '{')
        return 0;
    p++;
    while (p < e) {
        while (p < e && (*p == ' ' || *p == ','))
            p++;
        if (p >= e || *p == '}')
            return 0;
        if (*p != '"')
            return -1;
        const char *k = p + 1, *ke = skip_value(p, e);
        if (!ke)
            return -1;
        p = ke;
        while (p < e && (*p == ' ' || *p == ':'))
            p++;
        const char *v = p, *ve = skip_value(p, e);
        if (!ve)
            return -1;
        if (key_is(k, ke - 1 - k, "gtid") && *v == '"') {
            Py_ssize_t n = ve - v - 2;
            if (n < 0 || n >= (Py_ssize_t)sizeof J->gtid || memchr(v + 1, '\\', n))
                return -1;
            memcpy(J->gtid, v + 1, n);
            J->glen = (int)n;
        }
        p = ve;
    }
    return 0;
}

/* one line [p, e) (without its newline) as a row */
static int j_line(JsonCols *J, const char *p, const char *e) {
    Row r;
    memset(&r, 0, sizeof r);
    r.code = -1;
    r.ok = 2;
    r.name = r.fields = "";
    int have = 0; /* bits: offset, end, code, ts, sid, size, logpos, flags, ok, name, fields */
    const char *fv = NULL, *fe = NULL;
    if (p >= e || *p != '{')
        return -1;
    p++;
    while (p < e) {
        while (p < e && (*p == ' ' || *p == ','))
            p++;
        if (p < e && *p == '}')
            break;
        if (p >= e || *p != '"')
            return -1;
        const char *k = p + 1, *ke = skip_value(p, e);
        if (!ke)
            return -1;
        Py_ssize_t nk = ke - 1 - k;
        p = ke;
        while (p < e && (*p == ' ' || *p == ':'))
            p++;
        const char *v = p, *ve = skip_value(p, e);
        if (!ve)
            return -1;
        p = ve;
        long long x;
#define NUM(name, field, bit)                                                                                   \
    else if (key_is(k, nk, name)) {                                                                           \
        if (num(v, ve, &x))                                                                                   \
            return -1;                                                                                        \
        r.field = x;                                                                                          \
        have |= bit;                                                                                          \
    }
        if (0) {
        }
        NUM("offset", offset, 1)
        NUM("end_offset", end, 2)
        NUM("timestamp", ts, 8)
        NUM("server_id", sid, 16)
        NUM("event_size", size, 32)
        NUM("log_pos", logpos, 64)
        else if (key_is(k, nk, "type_code")) {
            if (num(v, ve, &x) || x < 0 || x > 255)
                return -1;
            r.code = (int)x;
            have |= 4;
        }
        else if (key_is(k, nk, "flags")) {
            if (num(v, ve, &x))
                return -1;
            r.flags = (int)x;
            have |= 128;
        }
        else if (key_is(k, nk, "checksum_ok")) {
            r.ok = *v == 't' ? 1 : *v == 'f' ? 0 : 2;
            have |= 256;
        }
        else if (key_is(k, nk, "name")) {
            if (*v == '"') {
                r.name = v + 1;
                r.nname = ve - v - 2;
                if (memchr(r.name, '\\', r.nname))
                    return -1;
            }
            have |= 512;
        }
        else if (key_is(k, nk, "fields")) {
            r.fields = fv = v;
            r.nfields = ve - v;
            fe = ve;
            have |= 1024;
        }
        else if (key_is(k, nk, "payload_offset")) {
            if (num(v, ve, &x))
                return -1;
            r.poff = x;
            r.have_poff = 1;
        }
        else if (key_is(k, nk, "inner_offset")) {
            if (num(v, ve, &x))
                return -1;
            r.ioff = x;
            r.have_ioff = 1;
        }
#undef NUM
    }
    if (have != 2047)
        return -1;
    if (r.code == GTID_EVENT || r.code == GTID_LOG_EVENT || r.code == ANONYMOUS_GTID_LOG_EVENT ||
        r.code == GTID_TAGGED_LOG_EVENT) {
        if (fields_gtid(J, fv, fe))
            return -1;
    }
    return j_add(J, &r);
}

static PyObject *j_lines(JsonCols *J, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    const char *p = b.buf, *end = p + b.len;
    int bad = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        const char *e = nl ? nl : end;
        if (e > p) {
            Py_ssize_t n0 = J->n;
            if (j_line(J, p, e)) {
                if (!PyErr_Occurred())
                    bad = 1;
                (void)n0;
                break;
            }
        }
        p = e + 1;
    }
    PyBuffer_Release(&b);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "JsonCols.lines: a line that is not the decoder's JSON");
        return NULL;
    }
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

/* append(offset, end_offset, code, ts, sid, size, log_pos, flags, ok, name, fields, payload_offset, inner_offset) */
static PyObject *j_append(JsonCols *J, PyObject *args) {
    Row r;
    memset(&r, 0, sizeof r);
    PyObject *ok, *name, *fields, *po, *io;
    if (!PyArg_ParseTuple(args, "LLiLLLLiOOOOO", &r.offset, &r.end, &r.code, &r.ts, &r.sid, &r.size, &r.logpos,
                          &r.flags, &ok, &name, &fields, &po, &io))
        return NULL;
    r.ok = ok == Py_None ? 2 : PyObject_IsTrue(ok);
    if (r.ok < 0)
        return NULL;
    r.name = name == Py_None ? "" : PyUnicode_AsUTF8AndSize(name, &r.nname);
    r.fields = fields == Py_None ? "" : PyUnicode_AsUTF8AndSize(fields, &r.nfields);
    if (!r.name || !r.fields)
        return NULL;
    if (po != Py_None) {
        r.poff = PyLong_AsLongLong(po);
        r.have_poff = 1;
    }
    if (io != Py_None) {
        r.ioff = PyLong_AsLongLong(io);
        r.have_ioff = 1;
    }
    if (PyErr_Occurred() || j_add(J, &r))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *j_finish(JsonCols *J, PyObject *Py_UNUSED(ignored)) {
    PyObject *d = columns_dict(J->c, JCOLS, JCOL_NAMES);
    if (!d)
        return NULL;
    PyObject *out = Py_BuildValue("(nN)", J->n, d);
    j_reset(J);
    return out;
}

static PyObject *j_get_gtid(JsonCols *J, void *Py_UNUSED(closure)) {
    return gtid_get(J->gtid, J->glen);
}

static int j_set_gtid(JsonCols *J, PyObject *v, void *Py_UNUSED(closure)) {
    return gtid_set(J->gtid, &J->glen, v);
}

static PyObject *j_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    JsonCols *J = (JsonCols *)type->tp_alloc(type, 0);
    if (!J)
        return NULL;
    J->glen = -1;
    if (grow(&J->c[J_NOFF], 4) || grow(&J->c[J_FOFF], 4) || grow(&J->c[J_GOFF], 4)) {
        Py_DECREF(J);
        return NULL;
    }
    j_reset(J);
    return (PyObject *)J;
}

static void j_dealloc(JsonCols *J) {
    for (int k = 0; k < JCOLS; k++)
        PyMem_Free(J->c[k].p);
    Py_TYPE(J)->tp_free((PyObject *)J);
}

static Py_ssize_t j_len(JsonCols *J) { return J->n; }

static PyGetSetDef j_getset[] = {
    {"gtid", (getter)j_get_gtid, (setter)j_set_gtid, "the GTID in force (None: none)", NULL}, {NULL}};

static PyMethodDef j_methods[] = {
    {"lines", (PyCFunction)j_lines, METH_VARARGS, "lines(text): the decoder's JSON lines appended as rows"},
    {"append", (PyCFunction)j_append, METH_VARARGS,
     "append(offset, end_offset, code, ts, sid, size, log_pos, flags, ok, name, fields, payload_offset, inner_offset)"},
    {"finish", (PyCFunction)j_finish, METH_NOARGS, "finish() -> (n, {column: bytes})"},
    {NULL}};

static PySequenceMethods j_seq = {.sq_length = (lenfunc)j_len};

static PyTypeObject JsonColsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._eventcols.JsonCols",
    .tp_basicsize = sizeof(JsonCols),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The events table's columns with decoded fields, from the C decoder's JSON lines.",
    .tp_new = j_new,
    .tp_dealloc = (destructor)j_dealloc,
    .tp_methods = j_methods,
    .tp_getset = j_getset,
    .tp_as_sequence = &j_seq,
};

/* ---- Run: the transaction walk's events taken in C, for binlogkit.transactions.Grouper ------------------------
 *
 * A taker of the framing loop for the transaction walk (``Grouper.feed_frames(run=...)``), with a
 * 19-byte header, in two modes the Python walk sets after each frame it took:
 *
 * ``armed`` (a transaction is open that no event but a deciding one can end): it takes the whole
 * events whose type is ``plain`` (a 256-byte table from Python: known types that neither open,
 * decide nor stand outside a transaction: table maps, rows events, annotations...) and stops
 * before any other event (the Python walk frames it). In a relay log (``relay``) only the
 * source's own events (log_pos set, neither RELAY_LOG nor ARTIFICIAL) while the source's
 * clock is known (``clock``: the 64-bit end so far, unwrapped as positions.SourceClock does),
 * without the binlog's log_pos check. ``pop()`` hands over what the walk would have accounted
 * for each.
 *
 * ``idle`` (a binlog, no transaction open; ``resume_end``: where the last event of this file's own source
 * ends, -1 unknown): it takes whole transactions that lie in the window, one after the other,
 * each: a GTID event (a MariaDB GTID without FL_STANDALONE, XA or an ALTER phase; a MySQL GTID with
 * its number in range; an anonymous GTID) before ``stop``, a Query ``BEGIN`` where the flavor
 * needs one, plain events, then an Xid or a Query ``COMMIT`` (Queries only in the 13-byte
 * post-header layout). Anything else in it -- another event type, a statement, a torn or
 * damaged event, a position break, the window's end -- and it takes nothing of that
 * transaction: the Python walk reads it. Each transaction taken is a row of the
 * ``transactions`` table in the column buffers (``finish()``), and the file's counts in
 * ``pop()``. At most ``capacity`` rows wait; then it takes no more until ``finish()``.
 *
 * Every event taken: whole in the window, CRC32 good when checksums are on, ``log_pos`` 0 or its
 * end (or the ARTIFICIAL flag). Every read is bounds-checked against the window. */

enum { R_START, R_FIRST_TS, R_SID, R_END, R_LAST_TS, R_EVENTS, R_BYTES, R_KIND, R_TERM, R_RESUME, R_RVALID, R_GOFF,
       R_GDATA, R_GVALID, RCOLS };
static const char *const RCOL_NAMES[RCOLS] = {"start_offset", "first_timestamp", "server_id", "end_offset",
                                        "last_timestamp", "events", "bytes", "kind", "terminator",
                                        "resume_source_pos", "resume_valid", "gtid_offsets", "gtid_data",
                                        "gtid_valid"};
enum { KIND_MARIADB, KIND_MYSQL, KIND_ANONYMOUS };  /* the kind column's codes (Python: tables._TRX_KINDS) */
enum { TERM_XID, TERM_COMMIT };                      /* the terminator column's codes */
#define MAX_SIDS 64

typedef struct {
    PyObject_HEAD
    unsigned char plain[256];
    int armed, idle, header_length, query_phl, relay;
    long long stop, resume_end, clock;
    Py_ssize_t capacity, rows;
    Buf c[RCOLS];
    /* what pop() hands over: the events taken (both modes) */
    long long n, nck, bytes, last_at, end, last_ts, first_ts_nz, last_ts_nz, src_end;
    int last_code;
    /* the transactions taken (idle mode): how many, the first's and the last's GTID or offset, their server ids */
    long long trx, first_trx_at, last_trx_at;
    char first_gtid[GTID_CAP], last_gtid[GTID_CAP];
    int first_glen, last_glen;
    uint32_t sids[MAX_SIDS];
    int nsids;
} Run;

static void run_reset(Run *R) {
    R->n = R->nck = R->bytes = 0;
    R->last_at = R->end = R->last_ts = 0;
    R->first_ts_nz = R->last_ts_nz = R->src_end = -1;
    R->last_code = -1;
    R->trx = 0;
    R->first_trx_at = R->last_trx_at = -1;
    R->first_glen = R->last_glen = -1;
    R->nsids = 0;
}

static void run_rows_reset(Run *R) {
    for (int k = 0; k < RCOLS; k++)
        R->c[k].len = 0;
    R->rows = 0;
    int32_t zero = 0;
    put(&R->c[R_GOFF], &zero, 4); /* room is there: the buffer was at least this long */
}

/* an event of the window at h (avail bytes from there) that may be taken: its size, or 0 */
static uint32_t settled(const unsigned char *h, Py_ssize_t avail, long long at, int crc_on, int own_pos) {
    if (avail < LEN_HEADER)
        return 0;
    uint32_t size = (uint32_t)le(h + 9, 4), log_pos = (uint32_t)le(h + 13, 4);
    int flags = (int)le(h + 17, 2);
    if (size < (uint32_t)LEN_HEADER + (crc_on ? 4 : 0) || (long long)size > MAX_EVENT_SIZE || size > avail)
        return 0;
    if (own_pos && log_pos && !(flags & LOG_EVENT_ARTIFICIAL_F) && log_pos != (uint32_t)((at + size) & 0xFFFFFFFFLL))
        return 0; /* a position break in a binlog: the Python walk records it */
    if (crc_on && crc32_of(h, size - 4) != (uint32_t)le(h + size - 4, 4))
        return 0; /* the Python walk reports or raises it */
    return size;
}

/* the events' accounting of one taken event */
static void count_event(Run *R, long long at, uint32_t size, int code, uint32_t ts, int crc_on) {
    R->n++;
    R->nck += crc_on;
    R->bytes += size;
    R->last_at = at;
    R->end = at + size;
    R->last_code = code;
    R->last_ts = ts;
    if (ts) {
        if (R->first_ts_nz < 0)
            R->first_ts_nz = ts;
        R->last_ts_nz = ts;
    }
}

/* the statement of a Query body (13-byte post-header) is exactly ``word`` */
static int statement_is(const unsigned char *b, Py_ssize_t nb, const char *word) {
    if (nb < 13)
        return 0;
    Py_ssize_t p = 13 + (Py_ssize_t)le(b + 11, 2) + b[8];
    if (p >= nb || b[p] != 0)
        return 0;
    Py_ssize_t n = (Py_ssize_t)strlen(word);
    return nb - p - 1 == n && memcmp(b + p + 1, word, n) == 0;
}

/* one whole transaction at h (avail bytes, at offset ``at``) taken: its length, or 0 (nothing taken) */
static Py_ssize_t whole_trx(Run *R, const unsigned char *h, Py_ssize_t avail, long long at, int crc_on) {
    int len_crc = crc_on ? 4 : 0;
    if (R->rows >= R->capacity || R->resume_end < 0 || (R->stop >= 0 && at >= R->stop) || avail < LEN_HEADER)
        return 0;
    int code = h[4];
    if (code != GTID_EVENT && code != GTID_LOG_EVENT && code != ANONYMOUS_GTID_LOG_EVENT)
        return 0;
    uint32_t size = settled(h, avail, at, crc_on, 1);
    if (!size)
        return 0;
    uint32_t sid = (uint32_t)le(h + 5, 4), ts0 = (uint32_t)le(h, 4);
    const unsigned char *b = h + LEN_HEADER;
    Py_ssize_t nb = size - LEN_HEADER - len_crc;
    char gtid[GTID_CAP];
    int glen = -1, kind, group;
    if (code == GTID_EVENT) {
        if (nb < 13)
            return 0;
        int flags2 = b[12];
        if (flags2 & (1 | 64 | 128)) /* standalone, XA: the Python walk */
            return 0;
        Py_ssize_t p = 13 + (flags2 & 2 ? 8 : 0);
        if (p < nb && (b[p] & (2 | 4 | 8)))  /* flags_extra: a two-phase ALTER's phase: the Python walk */
            return 0;
        glen = snprintf(gtid, sizeof gtid, "%u-%u-%llu", (unsigned)le(b + 8, 4), (unsigned)sid,
                        (unsigned long long)le(b, 8));
        kind = KIND_MARIADB;
        group = 1;
    } else if (code == GTID_LOG_EVENT) {
        if (nb < 25)
            return 0;
        uint64_t gno = le(b + 17, 8);
        if (gno < 1 || gno > MAX_GNO)
            return 0;
        char *o = gtid;
        for (int k = 0; k < 16; k++) {
            if (k == 4 || k == 6 || k == 8 || k == 10)
                *o++ = '-';
            *o++ = HEXD[b[1 + k] >> 4];
            *o++ = HEXD[b[1 + k] & 15];
        }
        o += snprintf(o, 24, ":%llu", (unsigned long long)gno);
        glen = (int)(o - gtid);
        kind = KIND_MYSQL;
        group = 0;
    } else {
        kind = KIND_ANONYMOUS;
        group = 0;
    }
    /* the rest, read before anything is counted */
    Py_ssize_t off = size;
    long long pos = at + size;
    uint32_t last_ts = ts0;
    int term = -1, nev = 1;
    long long nbytes = size;
    while (term < 0) {
        const unsigned char *e = h + off;
        uint32_t esz = settled(e, avail - off, pos, crc_on, 1);
        if (!esz)
            return 0;
        int ec = e[4];
        if (ec == XID_EVENT) {
            term = TERM_XID;
        } else if (ec == QUERY_EVENT) {
            if (R->query_phl != 13)
                return 0;
            const unsigned char *qb = e + LEN_HEADER;
            Py_ssize_t nq = esz - LEN_HEADER - len_crc;
            if (statement_is(qb, nq, "BEGIN"))
                group = 1;
            else if (group && statement_is(qb, nq, "COMMIT"))
                term = TERM_COMMIT;
            else
                return 0;
        } else if (!group || !R->plain[ec]) {
            return 0;
        }
        last_ts = (uint32_t)le(e, 4);
        nev++;
        nbytes += esz;
        off += esz;
        pos += esz;
    }
    /* taken: count its events, append its row */
    Py_ssize_t o2 = 0;
    long long p2 = at;
    while (o2 < off) {
        const unsigned char *e = h + o2;
        uint32_t esz = (uint32_t)le(e + 9, 4);
        count_event(R, p2, esz, e[4], (uint32_t)le(e, 4), crc_on);
        o2 += esz;
        p2 += esz;
    }
    int64_t v;
    int32_t i;
    unsigned char u;
#define P8(col, x) (v = (x), put(&R->c[col], &v, 8))
#define P1(col, x) (u = (unsigned char)(x), put(&R->c[col], &u, 1))
    if (P8(R_START, at) || P8(R_FIRST_TS, ts0) || P8(R_SID, sid) || P8(R_END, pos) || P8(R_LAST_TS, last_ts) ||
        P8(R_EVENTS, nev) || P8(R_BYTES, nbytes) || P1(R_KIND, kind) || P1(R_TERM, term) ||
        P8(R_RESUME, R->resume_end) || P1(R_RVALID, 1) || (glen > 0 && put(&R->c[R_GDATA], gtid, glen)))
        return -1;
    i = (int32_t)R->c[R_GDATA].len;
    if (put(&R->c[R_GOFF], &i, 4) || P1(R_GVALID, glen >= 0))
        return -1;
#undef P8
#undef P1
    R->rows++;
    R->trx++;
    if (R->first_trx_at < 0) {
        R->first_trx_at = at;
        R->first_glen = glen;
        if (glen > 0)
            memcpy(R->first_gtid, gtid, glen);
    }
    R->last_trx_at = at;
    R->last_glen = glen;
    if (glen > 0)
        memcpy(R->last_gtid, gtid, glen);
    int seen = 0;
    for (int k = 0; k < R->nsids; k++)
        seen |= R->sids[k] == sid;
    if (!seen)
        R->sids[R->nsids++] = sid;
    R->resume_end = pos;
    return off;
}

static PyObject *run_take(Run *R, PyObject *args) {
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
    if (R->header_length == LEN_HEADER && R->armed) {
        for (;;) {
            const unsigned char *h = w + rel;
            if (filled - rel < LEN_HEADER || !R->plain[h[4]])
                break;
            uint32_t size = settled(h, filled - rel, at, crc_on, !R->relay);
            if (!size)
                break;
            if (R->relay) { /* the source's 64-bit end of it (positions.SourceClock.unwrap) */
                uint32_t log_pos = (uint32_t)le(h + 13, 4);
                int flags = (int)le(h + 17, 2);
                if (!log_pos || R->clock < 0 || (flags & (LOG_EVENT_RELAY_LOG_F | LOG_EVENT_ARTIFICIAL_F)))
                    break; /* not the source's own event, or no clock: the Python walk */
                long long low = R->clock + size;
                long long e = (low & ~0xFFFFFFFFLL) | (long long)log_pos;
                if (e < low)
                    e += 0x100000000LL;
                R->clock = R->src_end = e;
            }
            count_event(R, at, size, h[4], (uint32_t)le(h, 4), crc_on);
            rel += size;
            at += size;
        }
    } else if (R->header_length == LEN_HEADER && R->idle) {
        while (R->nsids < MAX_SIDS) {
            Py_ssize_t got = whole_trx(R, w + rel, filled - rel, at, crc_on);
            if (got < 0) {
                PyBuffer_Release(&buf);
                return NULL;
            }
            if (!got)
                break;
            rel += got;
            at += got;
        }
    }
    PyBuffer_Release(&buf);
    return Py_BuildValue("(nL)", rel, at);
}

/* pop() -> None (nothing taken since the last pop), or (events, checksummed, bytes, last offset, end, last type
   code, last timestamp, first non-zero timestamp, last non-zero timestamp (-1: none), transactions taken,
   (first GTID or None, its offset), (last GTID or None, its offset), server ids, the source's end of the last
   event in a relay log (-1: not one)) */
static PyObject *run_pop(Run *R, PyObject *Py_UNUSED(ignored)) {
    if (!R->n)
        Py_RETURN_NONE;
    PyObject *sids = PyList_New(R->nsids);
    if (!sids)
        return NULL;
    for (int k = 0; k < R->nsids; k++) {
        PyObject *x = PyLong_FromUnsignedLong(R->sids[k]);
        if (!x) {
            Py_DECREF(sids);
            return NULL;
        }
        PyList_SET_ITEM(sids, k, x);
    }
    PyObject *first = gtid_get(R->first_gtid, R->first_glen), *last = gtid_get(R->last_gtid, R->last_glen);
    if (!first || !last) {
        Py_XDECREF(first);
        Py_XDECREF(last);
        Py_DECREF(sids);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(LLLLLiLLLL(NL)(NL)NL)", R->n, R->nck, R->bytes, R->last_at, R->end, R->last_code,
                                  R->last_ts, R->first_ts_nz, R->last_ts_nz, R->trx, first, R->first_trx_at, last,
                                  R->last_trx_at, sids, R->src_end);
    run_reset(R);
    return out;
}

/* finish() -> (n, {name: bytes}): the taken transactions' column buffers; the next batch starts empty */
static PyObject *run_finish(Run *R, PyObject *Py_UNUSED(ignored)) {
    PyObject *d = columns_dict(R->c, RCOLS, RCOL_NAMES);
    if (!d)
        return NULL;
    PyObject *out = Py_BuildValue("(nN)", R->rows, d);
    run_rows_reset(R);
    return out;
}

static PyObject *run_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"plain", "capacity", NULL};
    Py_buffer p;
    Py_ssize_t capacity = 8192;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|n", kwlist, &p, &capacity))
        return NULL;
    if (p.len != 256 || capacity < 1) {
        PyBuffer_Release(&p);
        PyErr_SetString(PyExc_ValueError, "plain: 256 bytes, one per type code; capacity: at least 1");
        return NULL;
    }
    Run *R = (Run *)type->tp_alloc(type, 0);
    if (!R) {
        PyBuffer_Release(&p);
        return NULL;
    }
    memcpy(R->plain, p.buf, 256);
    PyBuffer_Release(&p);
    R->header_length = LEN_HEADER;
    R->query_phl = 13;
    R->stop = -1;
    R->resume_end = -1;
    R->clock = -1;
    R->capacity = capacity;
    run_reset(R);
    if (grow(&R->c[R_GOFF], 4)) {
        Py_DECREF(R);
        return NULL;
    }
    run_rows_reset(R);
    return (PyObject *)R;
}

static void run_dealloc(Run *R) {
    for (int k = 0; k < RCOLS; k++)
        PyMem_Free(R->c[k].p);
    Py_TYPE(R)->tp_free((PyObject *)R);
}

static Py_ssize_t run_len(Run *R) { return R->rows; }

static PyMemberDef run_members[] = {
    {"armed", T_INT, offsetof(Run, armed), 0, "take the plain events inside the open transaction"},
    {"idle", T_INT, offsetof(Run, idle), 0, "take whole transactions (none is open)"},
    {"header_length", T_INT, offsetof(Run, header_length), 0, "the format's common header length"},
    {"query_phl", T_INT, offsetof(Run, query_phl), 0, "the format's Query post-header length"},
    {"relay", T_INT, offsetof(Run, relay), 0, "a relay log: armed takes the source's own events, by its clock"},
    {"clock", T_LONGLONG, offsetof(Run, clock), 0, "a relay log's source end so far (-1: unknown)"},
    {"stop", T_LONGLONG, offsetof(Run, stop), 0, "no transaction taken that begins at or after it (-1: never)"},
    {"resume_end", T_LONGLONG, offsetof(Run, resume_end), 0,
     "the source end of the last event before (this file's own source; -1: unknown)"},
    {NULL}};

static PyMethodDef run_methods[] = {
    {"take", (PyCFunction)run_take, METH_VARARGS, "take(buf, rel, filled, at, crc_on) -> (rel, at)"},
    {"pop", (PyCFunction)run_pop, METH_NOARGS, "pop() -> None or what was taken since the last pop"},
    {"finish", (PyCFunction)run_finish, METH_NOARGS, "finish() -> (n, {column: bytes}): the taken transactions"},
    {NULL}};

static PySequenceMethods run_seq = {.sq_length = (lenfunc)run_len};

static PyTypeObject RunType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._eventcols.Run",
    .tp_basicsize = sizeof(Run),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The transaction walk's events taken in C (see the module's doc).",
    .tp_new = run_new,
    .tp_dealloc = (destructor)run_dealloc,
    .tp_methods = run_methods,
    .tp_members = run_members,
    .tp_as_sequence = &run_seq,
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
    if (PyType_Ready(&ColsType) < 0 || PyType_Ready(&JsonColsType) < 0 || PyType_Ready(&RunType) < 0)
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
    Py_INCREF(&JsonColsType);
    if (PyModule_AddObject(m, "JsonCols", (PyObject *)&JsonColsType) < 0) {
        Py_DECREF(&JsonColsType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&RunType);
    if (PyModule_AddObject(m, "Run", (PyObject *)&RunType) < 0) {
        Py_DECREF(&RunType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
