/*
 * binlogkit._rowarrow: a rows event's images straight into Arrow column buffers, in C.
 *
 * An optional accelerator for export's change table (binlogkit/export/dataset.py), which keeps
 * the Python decoder (binlogkit/rowvalues/images.py + export/schema.py's converters) as the
 * reference: tests/test_rowarrow.py holds the tables both make equal.
 *
 * A Plan (made once per table map by binlogkit/rowvalues/arrowcols.py) says, per column, how its
 * value is stored in the image and which Arrow layout it goes to. A Builder (one per open part of
 * the dataset) holds, per column and side (before / after), the growing Arrow buffers: a validity
 * bitmap, int32 offsets for string / binary, the data. ``add`` appends one rows event's rows;
 * anything this code does not settle exactly as the Python path does (a zero or invalid date,
 * text that is not valid UTF-8, an image that runs past its end or leaves bytes over) rolls the
 * builder back to where it was and returns -1: the caller decodes that event in Python. Every
 * read is bounds-checked against the image's end. ``finish`` hands the buffers out as bytes,
 * which pyarrow wraps (pa.Array.from_buffers) without a Python object per value. Per row the
 * builder also marks whether its after image is partial (``partial_rows``, ``partial``: the
 * columns-present bitmap lacks a column of the table), what the mirror backfill stops before.
 *
 * Column kinds (the first number of each plan entry; p1, p2 follow):
 *   INT    p1 bytes in (1,2,3,4,8), p2 bytes out (1,2,4,8), signed
 *   F32 F64           the stored IEEE bytes
 *   DEC    p1 precision (<= 65), p2 scale (<= 30) -> decimal128 (p1 <= 38: 16 bytes), else decimal256 (32)
 *   YEAR              -> uint16, 1900 + y (0 for 0)
 *   DATE              -> date32 (days since 1970-01-01)
 *   DT2 / TS2         p1 fsp, p2 unit (0 ms, 1 us) -> int64
 *   TIME2  p1 fsp     -> duration[us]
 *   DT, TS, TIME      the old layouts (no fraction) -> ms, ms, us
 *   UTF8   p1 prefix bytes, the value checked as strict UTF-8 -> string
 *   ASCII  p1 prefix bytes, every byte < 0x80       -> string
 *   BIN    p1 prefix bytes, p2 pad (BINARY(n): zeros to n) -> binary
 *   ENUM   p1 bytes, p2 labels (0xFFFF: none) -> uint16: the index (with labels, 0 when out of range)
 *   SET    p1 bytes -> uint64;  BIT p1 meta -> uint64;  GEOM p1 prefix bytes -> binary (SRID dropped)
 *   LATIN1 p1 prefix bytes: MySQL's latin1 (cp1252, its five undefined bytes as U+0081...) -> string
 *   SETL   p1 bytes, the members (a tuple of UTF-8 bytes, the entry's fifth item) -> string: "a,c"
 *   JSON   p1 prefix bytes: MySQL's binary JSON -> string, the text of codecs/mysql_json.py
 *   VEC    p1 prefix bytes: float32 values -> list<float32> (offsets in bytes: quarter() makes them items)
 *   SKIP   p1 fixed bytes, or p2 length-prefix bytes: sizing only (bounds(), flashback's image cutting)
 *   ENUML  p1 bytes, the labels (a tuple of UTF-8 bytes) -> string: the label of the index, "" for 0 / out of range
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "_constants.h"

enum { K_INT = 1, K_F32, K_F64, K_DEC, K_YEAR, K_DATE, K_DT2, K_TS2, K_TIME2, K_DT, K_TS, K_TIME, K_UTF8, K_ASCII,
       K_BIN, K_ENUM, K_SET, K_BIT, K_GEOM, K_LATIN1, K_SETL, K_JSON, K_VEC, K_SKIP, K_ENUML, K_LAST };

typedef struct {
    int kind, p1, p2, p3;
    int width;   /* output bytes per value; 0: variable (offsets + data) */
    PyObject *labels; /* K_SETL: a tuple of bytes (the members' UTF-8), owned */
} Col;

/* ---- Plan ------------------------------------------------------------------------------------ */
typedef struct {
    PyObject_HEAD
    int n;
    Col *cols;
} Plan;

static int out_width(const Col *c) {
    switch (c->kind) {
    case K_INT: return c->p2;
    case K_F32: return 4;
    case K_F64: return 8;
    case K_DEC: return c->p1 > 38 ? 32 : 16;
    case K_YEAR: case K_ENUM: return 2;
    case K_DATE: return 4;
    case K_UTF8: case K_ASCII: case K_BIN: case K_GEOM: case K_LATIN1: case K_SETL: case K_JSON: case K_VEC: case K_ENUML: return 0;
    default: return 8;
    }
}

static void free_cols(Col *cols, Py_ssize_t n) {
    if (cols)
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(cols[i].labels);
    PyMem_Free(cols);
}

static void plan_dealloc(Plan *self) {
    free_cols(self->cols, self->n);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int plan_init(Plan *self, PyObject *args, PyObject *kw) {
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O", &seq))
        return -1;
    PyObject *fast = PySequence_Fast(seq, "a plan is a sequence of (kind, p1, p2, p3)");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    Col *cols = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Col));
    if (!cols) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Col *c = &cols[i];
        PyObject *labels = NULL;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "iiii|O!", &c->kind, &c->p1, &c->p2, &c->p3,
                              &PyTuple_Type, &labels))
            goto bad;
        if (labels) {
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(labels); j++)
                if (!PyBytes_Check(PyTuple_GET_ITEM(labels, j))) {
                    PyErr_Format(PyExc_TypeError, "plan entry %zd: labels are bytes", i);
                    goto bad;
                }
            Py_INCREF(labels);
            c->labels = labels;
        }
        int ok = c->kind > 0 && c->kind < K_LAST;
        if (c->kind == K_INT)
            ok = ok && (c->p1 == 1 || c->p1 == 2 || c->p1 == 3 || c->p1 == 4 || c->p1 == 8) &&
                 (c->p2 == 1 || c->p2 == 2 || c->p2 == 4 || c->p2 == 8) && c->p2 >= c->p1;
        if (c->kind == K_DEC)
            ok = ok && c->p1 >= 1 && c->p1 <= 65 && c->p2 >= 0 && c->p2 <= 30 && c->p2 <= c->p1;
        if (c->kind == K_UTF8 || c->kind == K_ASCII || c->kind == K_BIN || c->kind == K_GEOM || c->kind == K_LATIN1 ||
            c->kind == K_JSON || c->kind == K_VEC)
            ok = ok && c->p1 >= 1 && c->p1 <= 4;
        if (c->kind == K_SKIP) /* sizing only (bounds): p1 fixed bytes, or p2 length-prefix bytes */
            ok = ok && ((c->p1 > 0 && c->p2 == 0) || (c->p1 == 0 && c->p2 >= 1 && c->p2 <= 4));
        if (c->kind == K_SETL)
            ok = ok && c->p1 >= 1 && c->p1 <= 8 && c->labels && PyTuple_GET_SIZE(c->labels) <= 64;
        else if (c->kind == K_ENUML)
            ok = ok && c->p1 >= 1 && c->p1 <= 2 && c->labels;
        else
            ok = ok && !c->labels;
        if (c->kind == K_ENUM || c->kind == K_SET)
            ok = ok && c->p1 >= 1 && c->p1 <= (c->kind == K_ENUM ? 2 : 8);
        if (c->kind == K_DT2 || c->kind == K_TS2 || c->kind == K_TIME2)
            ok = ok && c->p1 >= 0 && c->p1 <= 6;
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "plan entry %zd: bad column (%d, %d, %d)", i, c->kind, c->p1, c->p2);
            goto bad;
        }
        c->width = out_width(c);
    }
    Py_DECREF(fast);
    free_cols(self->cols, self->n);
    self->cols = cols;
    self->n = (int)n;
    return 0;
bad:
    Py_DECREF(fast);
    free_cols(cols, n);
    return -1;
}

static PyObject *plan_widths(Plan *self, void *closure) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->n);
    if (!out)
        return NULL;
    for (int i = 0; i < self->n; i++)
        PyBytes_AS_STRING(out)[i] = (char)self->cols[i].width;
    return out;
}

static PyGetSetDef plan_getset[] = {
    {"widths", (getter)plan_widths, NULL, "output bytes per value of each column (0: offsets + data)", NULL},
    {NULL}};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._rowarrow.Plan",
    .tp_basicsize = sizeof(Plan),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Plan(((kind, p1, p2, p3), ...)): how each column of a table map goes to Arrow",
    .tp_init = (initproc)plan_init,
    .tp_new = PyType_GenericNew,
    .tp_getset = plan_getset,
};

/* ---- growable buffers ------------------------------------------------------------------------- */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} Buf;

/* the reallocation (the rare case): kept out of line, so that grow's check is inlined into every
 * append (one call per value was 1-2 % of an export's instructions) */
static int __attribute__((noinline)) grow_slow(Buf *b, size_t more) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    uint8_t *p = PyMem_Realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int grow(Buf *b, size_t more) { return b->len + more <= b->cap ? 0 : grow_slow(b, more); }

typedef struct {
    Buf valid, offsets, data;
    int64_t n, nulls;
    int width;
} Arr;

typedef struct {
    int64_t n, nulls;
    size_t data_len;
} Mark;

static int arr_bit(Arr *a, int on) {
    if ((a->n & 7) == 0) {
        if (grow(&a->valid, 1))
            return -1;
        a->valid.p[a->valid.len++] = 0;
    }
    if (on)
        a->valid.p[a->n >> 3] |= (uint8_t)(1u << (a->n & 7));
    else {
        a->valid.p[a->n >> 3] &= (uint8_t) ~(1u << (a->n & 7));
        a->nulls++;
    }
    return 0;
}

static int arr_offset(Arr *a) {
    if (grow(&a->offsets, 4))
        return -1;
    if (a->data.len > INT32_MAX)
        return -1;
    int32_t o = (int32_t)a->data.len;
    memcpy(a->offsets.p + a->offsets.len, &o, 4);
    a->offsets.len += 4;
    return 0;
}

static int arr_null(Arr *a) {
    if (arr_bit(a, 0))
        return -1;
    if (a->width) {
        if (grow(&a->data, (size_t)a->width))
            return -1;
        uint8_t *d = a->data.p + a->data.len;
        switch (a->width) { /* the common widths stored at once (a memset call per null value showed) */
        case 4: {
            uint32_t z = 0;
            memcpy(d, &z, 4);
            break;
        }
        case 8: {
            uint64_t z = 0;
            memcpy(d, &z, 8);
            break;
        }
        default:
            memset(d, 0, (size_t)a->width);
        }
        a->data.len += (size_t)a->width;
    } else if (arr_offset(a))
        return -1;
    a->n++;
    return 0;
}

static int arr_fixed(Arr *a, const void *v) {
    if (arr_bit(a, 1) || grow(&a->data, (size_t)a->width))
        return -1;
    memcpy(a->data.p + a->data.len, v, (size_t)a->width);
    a->data.len += (size_t)a->width;
    a->n++;
    return 0;
}

static int arr_var(Arr *a, const uint8_t *v, size_t len, size_t pad) {
    size_t total = len < pad ? pad : len;
    if (arr_bit(a, 1) || grow(&a->data, total))
        return -1;
    if (len)
        memcpy(a->data.p + a->data.len, v, len);
    if (total > len)
        memset(a->data.p + a->data.len + len, 0, total - len);
    a->data.len += total;
    if (arr_offset(a))
        return -1;
    a->n++;
    return 0;
}

static void arr_reset(Arr *a) {
    a->valid.len = a->offsets.len = a->data.len = 0;
    a->n = a->nulls = 0;
    if (!a->width) {
        grow(&a->offsets, 4); /* the first offset; a failure shows at the next append */
        if (a->offsets.cap >= 4) {
            memset(a->offsets.p, 0, 4);
            a->offsets.len = 4;
        }
    }
}

static void arr_rollback(Arr *a, const Mark *m) {
    a->n = m->n;
    a->nulls = m->nulls;
    a->data.len = m->data_len;
    a->valid.len = (size_t)((m->n + 7) >> 3);
    if (!a->width)
        a->offsets.len = (size_t)(m->n + 1) * 4;
}

/* ---- values ---------------------------------------------------------------------------------- */
static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t be(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* a date Python's datetime.date takes (year 1-9999, a real day of its month) */
static int valid_date(int64_t y, int64_t m, int64_t d) {
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1)
        return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= mdays[m - 1] + (m == 2 && leap);
}

static int utf8_ok(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
                return 0;
            if (c == 0xE0 && s[i + 1] < 0xA0)
                return 0; /* overlong */
            if (c == 0xED && s[i + 1] >= 0xA0)
                return 0; /* surrogate */
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
                return 0;
            if (c == 0xF0 && s[i + 1] < 0x90)
                return 0;
            if (c == 0xF4 && s[i + 1] >= 0x90)
                return 0;
            i += 4;
        } else
            return 0;
    }
    return 1;
}

/* MySQL's latin1 is cp1252; the five bytes cp1252 leaves undefined map to U+0081... (as latin-1) */
static const uint16_t CP1252_80[32] = {0x20ac, 0x81,   0x201a, 0x192,  0x201e, 0x2026, 0x2020, 0x2021,
                                       0x2c6,  0x2030, 0x160,  0x2039, 0x152,  0x8d,   0x17d,  0x8f,
                                       0x90,   0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
                                       0x2dc,  0x2122, 0x161,  0x203a, 0x153,  0x9d,   0x17e,  0x178};

static int arr_latin1(Arr *a, const uint8_t *s, size_t n) {
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned cp = s[i] >= 0x80 && s[i] < 0xA0 ? CP1252_80[s[i] - 0x80] : s[i];
        out += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
    }
    if (arr_bit(a, 1) || grow(&a->data, out))
        return -1;
    uint8_t *d = a->data.p + a->data.len;
    for (size_t i = 0; i < n; i++) {
        unsigned cp = s[i] >= 0x80 && s[i] < 0xA0 ? CP1252_80[s[i] - 0x80] : s[i];
        if (cp < 0x80)
            *d++ = (uint8_t)cp;
        else if (cp < 0x800) {
            *d++ = (uint8_t)(0xC0 | cp >> 6);
            *d++ = (uint8_t)(0x80 | (cp & 0x3F));
        } else {
            *d++ = (uint8_t)(0xE0 | cp >> 12);
            *d++ = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            *d++ = (uint8_t)(0x80 | (cp & 0x3F));
        }
    }
    a->data.len += out;
    if (arr_offset(a))
        return -1;
    a->n++;
    return 0;
}

static const int DIG2BYTES[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
static const uint32_t POW10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

static int dec_size(int digits) { return digits / 9 * 4 + DIG2BYTES[digits % 9]; }

/* v = v * m + add over 4 little-endian 64-bit limbs (a 256-bit unsigned integer) */
static void mul_add(uint64_t v[4], uint32_t m, uint32_t add) {
    unsigned __int128 carry = add;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 t = (unsigned __int128)v[i] * m + carry;
        v[i] = (uint64_t)t;
        carry = t >> 64;
    }
}

/* MySQL's binary DECIMAL (strings/decimal.cc bin2decimal) to the unscaled integer, two's
   complement over 4 little-endian limbs (decimal128 is the low two, decimal256 all four); -1 for
   a group past its digits (a damaged image: the Python path says so) */
static int decimal_limbs(const uint8_t *raw, int prec, int scale, uint64_t out[4]) {
    int intg = prec - scale, size = dec_size(intg) + dec_size(scale);
    uint8_t b[40];
    if (size < 1 || size > (int)sizeof b)
        return -1;
    memcpy(b, raw, (size_t)size);
    int neg = !(b[0] & 0x80);
    b[0] ^= 0x80;
    if (neg)
        for (int i = 0; i < size; i++)
            b[i] ^= 0xFF;
    uint64_t v[4] = {0, 0, 0, 0};
    int q = 0;
    int lead = intg % 9;
    if (lead) {
        int s = DIG2BYTES[lead];
        uint64_t g = be(b + q, s);
        if (g >= POW10[lead])
            return -1;
        v[0] = g;
        q += s;
    }
    for (int i = 0; i < intg / 9 + scale / 9; i++, q += 4) {
        uint64_t g = be(b + q, 4);
        if (g >= POW10[9])
            return -1;
        mul_add(v, POW10[9], (uint32_t)g);
    }
    int rest = scale % 9;
    if (rest) {
        int s = DIG2BYTES[rest];
        uint64_t g = be(b + q, s);
        if (g >= POW10[rest])
            return -1;
        mul_add(v, POW10[rest], (uint32_t)g);
    }
    if (neg) { /* two's complement: invert, add one */
        unsigned __int128 carry = 1;
        for (int i = 0; i < 4; i++) {
            unsigned __int128 t = (unsigned __int128)(uint64_t)~v[i] + carry;
            v[i] = (uint64_t)t;
            carry = t >> 64;
        }
    }
    memcpy(out, v, sizeof v);
    return 0;
}

/* ---- MySQL binary JSON to the text of binlogkit/codecs/mysql_json.py (to_text) -------------------
 * Byte-identical to the Python reference where this code answers; anything the reference would
 * read differently from a well-formed document (a read past the end, which Python's slices
 * truncate silently; text that is not UTF-8, which Python replaces; keys out of MySQL's order,
 * where a duplicate would merge in Python's dict; a decimal group past its digits) makes it
 * return -1: the event goes to the Python path, which gives its value or its FormatError. Nesting
 * deeper than JSON_MAX_DEPTH containers and more value entries than the document has bytes (a
 * hostile document whose offsets point back: unbounded work) are refused here and in Python. */
#define JSON_MAX_DEPTH 100
enum { J_SOBJ, J_LOBJ, J_SARR, J_LARR, J_LIT, J_I16, J_U16, J_I32, J_U32, J_I64, J_U64, J_DBL, J_STR, J_OPQ = 15 };

typedef struct {
    const uint8_t *b;
    size_t len;
    Buf *o;
    size_t budget; /* value entries left */
} JW;

static int put(Buf *o, const void *s, size_t n) {
    if (grow(o, n))
        return -1;
    if (n)
        memcpy(o->p + o->len, s, n);
    o->len += n;
    return 0;
}

static int putf(Buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(Buf *o, const char *fmt, ...) {
    char tmp[96];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return -1;
    return put(o, tmp, (size_t)n);
}

/* a JSON string: only \\ " \n \r \b \f \t escaped (mysql_json._ESCAPES), the UTF-8 checked */
static int put_jstr(Buf *o, const uint8_t *s, size_t n) {
    if (!utf8_ok(s, n) || grow(o, 2 * n + 2))
        return -1;
    uint8_t *d = o->p + o->len;
    *d++ = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i], e = 0;
        switch (c) {
        case '\\': e = '\\'; break;
        case '"': e = '"'; break;
        case '\n': e = 'n'; break;
        case '\r': e = 'r'; break;
        case '\b': e = 'b'; break;
        case '\f': e = 'f'; break;
        case '\t': e = 't'; break;
        }
        if (e) {
            *d++ = '\\';
            *d++ = e;
        } else
            *d++ = c;
    }
    *d++ = '"';
    o->len = (size_t)(d - o->p);
    return 0;
}

/* the 7-bit-group length (at most 5 bytes) at *p */
static int jvarlen(const JW *w, size_t *p, uint64_t *n) {
    uint64_t v = 0;
    for (int i = 0; i < 5; i++) {
        if (*p >= w->len)
            return -1;
        uint8_t c = w->b[(*p)++];
        v |= (uint64_t)(c & 0x7F) << (7 * i);
        if (!(c & 0x80)) {
            *n = v;
            return 0;
        }
    }
    return -1;
}

/* a double as json.dumps writes one (float.__repr__; NaN, Infinity, -Infinity) */
static int put_double(Buf *o, double d) {
    if (d != d)
        return put(o, "NaN", 3);
    if (d == 1.0 / 0.0)
        return put(o, "Infinity", 8);
    if (d == -1.0 / 0.0)
        return put(o, "-Infinity", 9);
    char *t = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!t) {
        PyErr_Clear();
        return -1;
    }
    int r = put(o, t, strlen(t));
    PyMem_Free(t);
    return r;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* an opaque value (mysql_json._opaque): temporals quoted, DECIMAL as its exact number, else base64 */
static int put_opaque(Buf *o, int ft, const uint8_t *d, size_t n) {
    if (ft == 10 || ft == 11 || ft == 12 || ft == 7) {
        if (n < 8)
            return -1;
        uint64_t u = le(d, 8);
        int neg = (int64_t)u < 0;
        uint64_t a = neg ? (uint64_t)0 - u : u;
        uint64_t ip = a >> 24, us = a % (1u << 24);
        if (ft == 11)
            return putf(o, "\"%s%02llu:%02llu:%02llu.%06llu\"", neg ? "-" : "", (unsigned long long)((ip >> 12) % 1024),
                        (unsigned long long)((ip >> 6) % 64), (unsigned long long)(ip % 64), (unsigned long long)us);
        uint64_t ymd = ip >> 17, hms = ip % (1u << 17), ym = ymd >> 5, day = ymd % 32;
        if (putf(o, "\"%04llu-%02llu-%02llu", (unsigned long long)(ym / 13), (unsigned long long)(ym % 13),
                 (unsigned long long)day))
            return -1;
        if (ft == 10)
            return put(o, "\"", 1);
        return putf(o, " %02llu:%02llu:%02llu.%06llu\"", (unsigned long long)(hms >> 12),
                    (unsigned long long)((hms >> 6) % 64), (unsigned long long)(hms % 64), (unsigned long long)us);
    }
    if (ft == 246) {
        if (n < 2)
            return -1;
        int prec = d[0], scale = d[1];
        if (scale > prec || prec > 81)
            return -1;
        int intg = prec - scale, size = dec_size(intg) + dec_size(scale);
        if (size < 1 || n - 2 != (size_t)size)
            return -1;
        uint8_t b[40];
        memcpy(b, d + 2, (size_t)size);
        int neg = !(b[0] & 0x80);
        b[0] ^= 0x80;
        if (neg)
            for (int i = 0; i < size; i++)
                b[i] ^= 0xFF;
        char digits[100];
        int nd = 0, q = 0, lead = intg % 9;
        /* every group zero-padded to its digits: the integer part, then the fraction */
        int groups[20], widths[20], ng = 0;
        if (lead) {
            groups[ng] = DIG2BYTES[lead];
            widths[ng++] = lead;
        }
        for (int i = 0; i < intg / 9; i++) {
            groups[ng] = 4;
            widths[ng++] = 9;
        }
        int int_groups = ng;
        for (int i = 0; i < scale / 9; i++) {
            groups[ng] = 4;
            widths[ng++] = 9;
        }
        if (scale % 9) {
            groups[ng] = DIG2BYTES[scale % 9];
            widths[ng++] = scale % 9;
        }
        int int_digits = 0;
        for (int g = 0; g < ng; g++) {
            uint64_t v = be(b + q, groups[g]);
            q += groups[g];
            if (v >= POW10[widths[g]])
                return -1;
            for (int k = widths[g] - 1; k >= 0; k--) {
                digits[nd + k] = (char)('0' + v % 10);
                v /= 10;
            }
            nd += widths[g];
            if (g < int_groups)
                int_digits += widths[g];
        }
        if (neg && put(o, "-", 1))
            return -1;
        int z = 0;
        while (z < int_digits && digits[z] == '0')
            z++;
        if (z == int_digits ? put(o, "0", 1) : put(o, digits + z, (size_t)(int_digits - z)))
            return -1;
        if (scale && (put(o, ".", 1) || put(o, digits + int_digits, (size_t)(nd - int_digits))))
            return -1;
        return 0;
    }
    if (putf(o, "\"base64:type%d:", ft) || grow(o, (n + 2) / 3 * 4 + 1))
        return -1;
    uint8_t *t = o->p + o->len;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t x = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        *t++ = (uint8_t)B64[x >> 18];
        *t++ = (uint8_t)B64[x >> 12 & 63];
        *t++ = (uint8_t)B64[x >> 6 & 63];
        *t++ = (uint8_t)B64[x & 63];
    }
    if (i < n) {
        uint32_t x = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0);
        *t++ = (uint8_t)B64[x >> 18];
        *t++ = (uint8_t)B64[x >> 12 & 63];
        *t++ = i + 1 < n ? (uint8_t)B64[x >> 6 & 63] : '=';
        *t++ = '=';
    }
    *t++ = '"';
    o->len = (size_t)(t - o->p);
    return 0;
}

static int jvalue(JW *w, int t, size_t p, int depth);

/* a scalar of type t at p (mysql_json._scalar) */
static int jscalar(JW *w, int t, size_t p) {
    const uint8_t *b = w->b;
    static const int SIZE[] = {[J_I16] = 2, [J_U16] = 2, [J_I32] = 4, [J_U32] = 4, [J_I64] = 8, [J_U64] = 8,
                               [J_DBL] = 8};
    switch (t) {
    case J_LIT:
        if (p >= w->len || b[p] > 2)
            return -1;
        return b[p] == 0 ? put(w->o, "null", 4) : b[p] == 1 ? put(w->o, "true", 4) : put(w->o, "false", 5);
    case J_I16: case J_U16: case J_I32: case J_U32: case J_I64: case J_U64: case J_DBL: {
        int n = SIZE[t];
        if (p > w->len || (size_t)n > w->len - p)
            return -1;
        uint64_t u = le(b + p, n);
        if (t == J_DBL) {
            double d;
            memcpy(&d, &u, 8);
            return put_double(w->o, d);
        }
        if (t == J_U16 || t == J_U32 || t == J_U64)
            return putf(w->o, "%llu", (unsigned long long)u);
        if (n < 8 && (u >> (8 * n - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * n);
        return putf(w->o, "%lld", (long long)(int64_t)u);
    }
    case J_STR: {
        uint64_t n;
        if (jvarlen(w, &p, &n) || n > w->len - p)
            return -1;
        return put_jstr(w->o, b + p, (size_t)n);
    }
    case J_OPQ: {
        uint64_t n;
        size_t q = p + 1;
        if (p >= w->len || jvarlen(w, &q, &n) || n > w->len - q)
            return -1;
        return put_opaque(w->o, b[p], b + q, (size_t)n);
    }
    default:
        return -1;
    }
}

/* keys in MySQL's order (shorter first, then bytewise): strictly increasing, so none repeats */
static int key_before(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    if (al != bl)
        return al < bl;
    return memcmp(a, b, al) < 0;
}

/* an object or array at base (mysql_json._container) */
static int jcontainer(JW *w, int t, size_t base, int depth) {
    if (depth > JSON_MAX_DEPTH)
        return -1;
    int large = t == J_LOBJ || t == J_LARR, obj = t == J_SOBJ || t == J_LOBJ;
    size_t ws = large ? 4 : 2;
    const uint8_t *b = w->b;
    if (base > w->len || 2 * ws > w->len - base)
        return -1;
    uint64_t count = le(b + base, (int)ws);
    size_t p = base + 2 * ws;
    size_t keys = p, vals = p + (obj ? count * (ws + 2) : 0);
    /* every entry in the document (Python reads them as it goes; a short one is its error) */
    if (count > w->len || (obj && count * (ws + 2) > w->len - p) || count * (ws + 1) > w->len - vals)
        return -1;
    if (count > w->budget)
        return -1;
    w->budget -= count;
    if (put(w->o, obj ? "{" : "[", 1))
        return -1;
    const uint8_t *prev = NULL;
    size_t prevlen = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (i && put(w->o, ", ", 2))
            return -1;
        if (obj) {
            const uint8_t *e = b + keys + i * (ws + 2);
            uint64_t ko = le(e, (int)ws), kl = le(e + ws, 2);
            if (ko > w->len - base || kl > w->len - base - ko)
                return -1;
            const uint8_t *k = b + base + ko;
            if (prev && !key_before(prev, prevlen, k, (size_t)kl))
                return -1;
            prev = k;
            prevlen = (size_t)kl;
            if (put_jstr(w->o, k, (size_t)kl) || put(w->o, ": ", 2))
                return -1;
        }
        size_t e = vals + i * (ws + 1);
        int vt = b[e];
        int in = vt == J_LIT || vt == J_I16 || vt == J_U16 || (large && (vt == J_I32 || vt == J_U32));
        if (in) {
            if (jscalar(w, vt, e + 1))
                return -1;
        } else {
            uint64_t off = le(b + e + 1, (int)ws);
            if (off > w->len - base || jvalue(w, vt, base + (size_t)off, depth))
                return -1;
        }
    }
    return put(w->o, obj ? "}" : "]", 1);
}

static int jvalue(JW *w, int t, size_t p, int depth) {
    if (t <= J_LARR)
        return jcontainer(w, t, p, depth + 1);
    return jscalar(w, t, p);
}

/* a JSON column's binary document as its text into a (one value) */
static int arr_json(Arr *a, const uint8_t *s, size_t n) {
    size_t start = a->data.len;
    JW w = {s, n, &a->data, n};
    int r = n == 0 ? put(&a->data, "null", 4) : jvalue(&w, s[0], 1, 0);
    if (r || arr_bit(a, 1) || arr_offset(a)) {
        a->data.len = start;
        return -1;
    }
    a->n++;
    return 0;
}

/* one value of column c at *p into a; -1: not ours (or out of memory: the caller tells) */
static int value(const Col *c, const uint8_t *b, size_t len, size_t *pp, Arr *a) {
    size_t p = *pp;
#define NEED(k)                                                                                                     \
    do {                                                                                                            \
        if ((size_t)(k) > len - p)                                                                                  \
            return -1;                                                                                              \
    } while (0)
    switch (c->kind) {
    case K_INT: {
        NEED(c->p1);
        uint64_t u = le(b + p, c->p1);
        if (c->p3 && c->p1 < 8 && (u >> (8 * c->p1 - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * c->p1); /* sign-extend */
        p += (size_t)c->p1;
        if (arr_fixed(a, &u)) /* little-endian: the low p2 bytes */
            return -1;
        break;
    }
    case K_F32: NEED(4); if (arr_fixed(a, b + p)) return -1; p += 4; break;
    case K_F64: NEED(8); if (arr_fixed(a, b + p)) return -1; p += 8; break;
    case K_DEC: {
        int size = dec_size(c->p1 - c->p2) + dec_size(c->p2);
        NEED(size);
        uint64_t v[4];
        if (decimal_limbs(b + p, c->p1, c->p2, v))
            return -1;
        p += (size_t)size;
        if (arr_fixed(a, v)) /* the low 16 (decimal128) or all 32 bytes */
            return -1;
        break;
    }
    case K_YEAR: {
        NEED(1);
        uint16_t y = b[p] ? (uint16_t)(1900 + b[p]) : 0;
        p += 1;
        if (arr_fixed(a, &y))
            return -1;
        break;
    }
    case K_DATE: {
        NEED(3);
        uint64_t v = le(b + p, 3);
        int64_t y = (int64_t)(v >> 9), m = (int64_t)(v >> 5 & 15), d = (int64_t)(v & 31);
        if (!valid_date(y, m, d))
            return -1;
        int32_t days = (int32_t)days_from_civil(y, (unsigned)m, (unsigned)d);
        p += 3;
        if (arr_fixed(a, &days))
            return -1;
        break;
    }
    case K_DT2: {
        int fn = (c->p1 + 1) / 2;
        NEED(5 + fn);
        int64_t v = (int64_t)be(b + p, 5) - 0x8000000000LL;
        int64_t frac = fn ? (int64_t)be(b + p + 5, fn) * (fn == 1 ? 10000 : fn == 2 ? 100 : 1) : 0;
        if (v < 0)
            return -1;
        int64_t ymd = v >> 17, hms = v & ((1 << 17) - 1);
        int64_t ym = ymd >> 5, day = ymd & 31, year = ym / 13, month = ym % 13;
        int64_t h = hms >> 12, mi = (hms >> 6) & 63, s = hms & 63;
        if (!valid_date(year, month, day) || h > 23 || mi > 59 || s > 59 || frac > 999999)
            return -1;
        int64_t secs = days_from_civil(year, (unsigned)month, (unsigned)day) * 86400 + h * 3600 + mi * 60 + s;
        int64_t t = c->p2 ? secs * 1000000 + frac : secs * 1000 + frac / 1000;
        p += (size_t)(5 + fn);
        if (arr_fixed(a, &t))
            return -1;
        break;
    }
    case K_TS2: {
        int fn = (c->p1 + 1) / 2;
        NEED(4 + fn);
        int64_t secs = (int64_t)be(b + p, 4);
        int64_t frac = fn ? (int64_t)be(b + p + 4, fn) * (fn == 1 ? 10000 : fn == 2 ? 100 : 1) : 0;
        if ((secs == 0 && frac == 0) || frac > 999999)
            return -1; /* the zero TIMESTAMP, or no datetime: Python's companion text */
        int64_t t = c->p2 ? secs * 1000000 + frac : secs * 1000 + frac / 1000;
        p += (size_t)(4 + fn);
        if (arr_fixed(a, &t))
            return -1;
        break;
    }
    case K_TIME2: {
        int m = c->p1;
        int64_t packed;
        if (m >= 5) {
            NEED(6);
            packed = (int64_t)be(b + p, 6) - 0x800000000000LL;
            p += 6;
        } else {
            NEED(3);
            int64_t intpart = (int64_t)be(b + p, 3) - 0x800000;
            p += 3;
            int64_t frac = 0;
            if (m == 1 || m == 2) {
                NEED(1);
                frac = b[p];
                p += 1;
                if (intpart < 0 && frac) {
                    intpart += 1;
                    frac -= 0x100;
                }
                frac *= 10000;
            } else if (m == 3 || m == 4) {
                NEED(2);
                frac = (int64_t)be(b + p, 2);
                p += 2;
                if (intpart < 0 && frac) {
                    intpart += 1;
                    frac -= 0x10000;
                }
                frac *= 100;
            }
            packed = intpart * (1LL << 24) + frac;
        }
        int neg = packed < 0;
        int64_t av = neg ? -packed : packed;
        int64_t ip = av >> 24, us = av % (1LL << 24);
        int64_t h = (ip >> 12) % 1024, mi = (ip >> 6) % 64, sec = ip % 64;
        int64_t t = ((h * 60 + mi) * 60 + sec) * 1000000 + us;
        if (neg)
            t = -t;
        if (arr_fixed(a, &t))
            return -1;
        break;
    }
    case K_DT: {
        NEED(8);
        uint64_t v = le(b + p, 8);
        int64_t d = (int64_t)(v / 1000000), tm = (int64_t)(v % 1000000);
        int64_t y = d / 10000, mo = d / 100 % 100, dd = d % 100, h = tm / 10000, mi = tm / 100 % 100, s = tm % 100;
        if (!valid_date(y, mo, dd) || h > 23 || mi > 59 || s > 59)
            return -1;
        int64_t t = (days_from_civil(y, (unsigned)mo, (unsigned)dd) * 86400 + h * 3600 + mi * 60 + s) * 1000;
        p += 8;
        if (arr_fixed(a, &t))
            return -1;
        break;
    }
    case K_TS: {
        NEED(4);
        int64_t secs = (int64_t)le(b + p, 4);
        if (!secs)
            return -1;
        int64_t t = secs * 1000;
        p += 4;
        if (arr_fixed(a, &t))
            return -1;
        break;
    }
    case K_TIME: {
        NEED(3);
        int64_t v = (int64_t)le(b + p, 3);
        if (v & 0x800000)
            v -= 0x1000000;
        int64_t av = v < 0 ? -v : v;
        int64_t t = ((av / 10000) * 3600 + (av / 100 % 100) * 60 + av % 100) * 1000000;
        if (v < 0)
            t = -t;
        p += 3;
        if (arr_fixed(a, &t))
            return -1;
        break;
    }
    case K_LATIN1: {
        NEED(c->p1);
        uint64_t n = le(b + p, c->p1);
        p += (size_t)c->p1;
        NEED(n);
        if (arr_latin1(a, b + p, (size_t)n))
            return -1;
        p += (size_t)n;
        break;
    }
    case K_UTF8: case K_ASCII: case K_BIN: case K_GEOM: {
        NEED(c->p1);
        uint64_t n = le(b + p, c->p1);
        p += (size_t)c->p1;
        NEED(n);
        const uint8_t *s = b + p;
        p += (size_t)n;
        if (c->kind == K_UTF8 && !utf8_ok(s, (size_t)n))
            return -1;
        if (c->kind == K_ASCII)
            for (uint64_t i = 0; i < n; i++)
                if (s[i] >= 0x80)
                    return -1;
        if (c->kind == K_GEOM) {
            if (n < 4)
                return -1;
            s += 4;
            n -= 4;
        }
        if (arr_var(a, s, (size_t)n, c->kind == K_BIN ? (size_t)c->p2 : 0))
            return -1;
        break;
    }
    case K_ENUM: {
        NEED(c->p1);
        uint64_t v = le(b + p, c->p1);
        p += (size_t)c->p1;
        if (c->p2 != 0xFFFF && v > (uint64_t)c->p2)
            v = 0;
        uint16_t x = (uint16_t)v;
        if (arr_fixed(a, &x))
            return -1;
        break;
    }
    case K_SET: {
        NEED(c->p1);
        uint64_t v = le(b + p, c->p1);
        p += (size_t)c->p1;
        if (arr_fixed(a, &v))
            return -1;
        break;
    }
    case K_SETL: { /* the members whose bits are set, joined by commas (export/schema.py's set_) */
        NEED(c->p1);
        uint64_t v = le(b + p, c->p1);
        p += (size_t)c->p1;
        size_t start = a->data.len;
        int first = 1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(c->labels); i++) {
            if (!(v >> i & 1))
                continue;
            PyObject *m = PyTuple_GET_ITEM(c->labels, i);
            if ((!first && put(&a->data, ",", 1)) ||
                put(&a->data, PyBytes_AS_STRING(m), (size_t)PyBytes_GET_SIZE(m))) {
                a->data.len = start;
                return -1;
            }
            first = 0;
        }
        if (arr_bit(a, 1) || arr_offset(a)) {
            a->data.len = start;
            return -1;
        }
        a->n++;
        break;
    }
    case K_ENUML: { /* export/schema.py's enum: labels[x - 1], "" for 0 and past the labels */
        NEED(c->p1);
        uint64_t v = le(b + p, c->p1);
        p += (size_t)c->p1;
        if (v == 0 || v > (uint64_t)PyTuple_GET_SIZE(c->labels)) {
            if (arr_var(a, NULL, 0, 0))
                return -1;
        } else {
            PyObject *m = PyTuple_GET_ITEM(c->labels, (Py_ssize_t)v - 1);
            if (arr_var(a, (const uint8_t *)PyBytes_AS_STRING(m), (size_t)PyBytes_GET_SIZE(m), 0))
                return -1;
        }
        break;
    }
    case K_JSON: {
        NEED(c->p1);
        uint64_t n = le(b + p, c->p1);
        p += (size_t)c->p1;
        NEED(n);
        if (arr_json(a, b + p, (size_t)n))
            return -1;
        p += (size_t)n;
        break;
    }
    case K_VEC: { /* float32 values: the list's items (offsets in bytes here: finish's caller quarters them) */
        NEED(c->p1);
        uint64_t n = le(b + p, c->p1);
        p += (size_t)c->p1;
        NEED(n);
        if (n % 4)
            return -1;
        for (uint64_t i = 0; i < n; i += 4) {
            uint32_t f = (uint32_t)le(b + p + i, 4);
            if ((f & 0x7F800000u) == 0x7F800000u && (f & 0x7FFFFFu))
                return -1; /* NaN: its payload is Python's float's to keep or not */
        }
        if (arr_var(a, b + p, (size_t)n, 0))
            return -1;
        p += (size_t)n;
        break;
    }
    case K_BIT: {
        int nbits = (c->p1 & 0xFF) * 8 + (c->p1 >> 8);
        int n = (nbits + 7) / 8;
        if (n > 8)
            return -1;
        NEED(n);
        uint64_t v = be(b + p, n);
        p += (size_t)n;
        if (arr_fixed(a, &v))
            return -1;
        break;
    }
    default:
        return -1;
    }
#undef NEED
    *pp = p;
    return 0;
}

/* bounds(plan, rows, update): a rows event's full images cut at their ends (flashback's split_rows):
   [(image, None), ...] or [(before, after), ...]; None when an image runs past the rows, a column
   is not a SKIP column, or the plan has no columns (the Python path says why) */
static int image_end(const Plan *plan, const uint8_t *b, size_t len, size_t *pp) {
    int n = plan->n;
    size_t p = *pp, nb = (size_t)(n + 7) / 8;
    if (nb > len - p)
        return -1;
    const uint8_t *nulls = b + p;
    p += nb;
    for (int i = 0; i < n; i++) {
        const Col *c = &plan->cols[i];
        if (nulls[i >> 3] >> (i & 7) & 1)
            continue;
        if (c->kind != K_SKIP)
            return -1;
        uint64_t size = (uint64_t)c->p1;
        if (!size) {
            if ((size_t)c->p2 > len - p)
                return -1;
            size = le(b + p, c->p2);
            p += (size_t)c->p2;
        }
        if (size > len - p)
            return -1;
        p += (size_t)size;
    }
    *pp = p;
    return 0;
}

static PyObject *m_bounds(PyObject *mod, PyObject *args) {
    Plan *plan;
    Py_buffer rb;
    int update;
    if (!PyArg_ParseTuple(args, "O!y*p", &PlanType, &plan, &rb, &update))
        return NULL;
    const uint8_t *b = rb.buf;
    size_t len = (size_t)rb.len, p = 0;
    PyObject *out = PyList_New(0);
    if (!out || plan->n == 0)
        goto none;
    while (p < len) {
        size_t start = p, mid;
        if (image_end(plan, b, len, &p))
            goto none;
        mid = p;
        if (update && image_end(plan, b, len, &p))
            goto none;
        PyObject *first = PyBytes_FromStringAndSize((const char *)b + start, (Py_ssize_t)(mid - start));
        PyObject *second = update ? PyBytes_FromStringAndSize((const char *)b + mid, (Py_ssize_t)(p - mid)) : Py_None;
        if (update && !second)
            Py_CLEAR(first);
        else if (!update)
            Py_INCREF(Py_None);
        PyObject *pair = first ? PyTuple_Pack(2, first, second) : NULL;
        Py_XDECREF(first);
        Py_XDECREF(second);
        if (!pair || PyList_Append(out, pair)) {
            Py_XDECREF(pair);
            Py_DECREF(out);
            PyBuffer_Release(&rb);
            return NULL;
        }
        Py_DECREF(pair);
    }
    PyBuffer_Release(&rb);
    return out;
none:
    PyBuffer_Release(&rb);
    if (PyErr_Occurred()) {
        Py_XDECREF(out);
        return NULL;
    }
    Py_XDECREF(out);
    Py_RETURN_NONE;
}

/* a list column's offsets from bytes to items of 4 bytes (K_VEC: float32) */
static PyObject *m_quarter(PyObject *mod, PyObject *args) {
    Py_buffer ob;
    if (!PyArg_ParseTuple(args, "y*", &ob))
        return NULL;
    if (ob.len % 4) {
        PyBuffer_Release(&ob);
        PyErr_SetString(PyExc_ValueError, "quarter(offsets): int32 offsets");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, ob.len);
    if (out) {
        const uint8_t *src = ob.buf;
        uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < ob.len; i += 4) {
            int32_t o;
            memcpy(&o, src + i, 4);
            o /= 4;
            memcpy(dst + i, &o, 4);
        }
    }
    PyBuffer_Release(&ob);
    return out;
}

/* ---- Builder --------------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    int n;          /* columns */
    Arr *arrs;      /* 2n: before 0..n-1, after n..2n-1 */
    Mark *marks;
    int64_t rows;
    int oom;
    Buf partial;    /* per row held: 1 when its after image (a write's or an update's) lacks columns of the table */
    int64_t npartial;
} Builder;

static void builder_dealloc(Builder *self) {
    if (self->arrs)
        for (int i = 0; i < 2 * self->n; i++) {
            PyMem_Free(self->arrs[i].valid.p);
            PyMem_Free(self->arrs[i].offsets.p);
            PyMem_Free(self->arrs[i].data.p);
        }
    PyMem_Free(self->arrs);
    PyMem_Free(self->marks);
    PyMem_Free(self->partial.p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int builder_init(Builder *self, PyObject *args, PyObject *kw) {
    Py_buffer w;
    if (!PyArg_ParseTuple(args, "y*", &w))
        return -1;
    int n = (int)w.len;
    Arr *arrs = PyMem_Calloc((size_t)(2 * n + 1), sizeof(Arr));
    Mark *marks = PyMem_Calloc((size_t)(2 * n + 1), sizeof(Mark));
    if (!arrs || !marks) {
        PyBuffer_Release(&w);
        PyMem_Free(arrs);
        PyMem_Free(marks);
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < 2 * n; i++) {
        arrs[i].width = ((const uint8_t *)w.buf)[i % n];
        arr_reset(&arrs[i]);
    }
    PyBuffer_Release(&w);
    self->n = n;
    self->arrs = arrs;
    self->marks = marks;
    self->rows = 0;
    self->partial.len = 0;
    self->npartial = 0;
    return 0;
}

/* one image at *p: the null bitmap over the present columns, then their values */
static int image(Builder *self, const Plan *plan, const uint8_t *b, size_t len, size_t *pp, const uint8_t *bm,
                 Arr *side) {
    int n = plan->n, present = 0;
    for (int i = 0; i < n; i++)
        present += bm[i >> 3] >> (i & 7) & 1;
    size_t p = *pp, nb = (size_t)(present + 7) / 8;
    if (nb > len - p)
        return -1;
    const uint8_t *nulls = b + p;
    p += nb;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!(bm[i >> 3] >> (i & 7) & 1)) {
            if (arr_null(&side[i]))
                return -1;
            continue;
        }
        int isnull = nulls[k >> 3] >> (k & 7) & 1;
        k++;
        if (isnull) {
            if (arr_null(&side[i]))
                return -1;
        } else if (value(&plan->cols[i], b, len, &p, &side[i]))
            return -1;
    }
    *pp = p;
    return 0;
}

/* one rows event's images appended (kind 0 write, 1 update, 2 delete): the rows, or -1 with the
 * builder rolled back to where it was (keep == 0: counted, then rolled back) */
static long builder_append(Builder *self, const Plan *plan, const uint8_t *b, size_t len, int kind,
                           const uint8_t *bmb, size_t bblen, const uint8_t *bma, size_t balen, int keep) {
    int n = self->n;
    size_t need = (size_t)(n + 7) / 8;
    if (plan->n != n || bblen < need || (kind == 1 && balen < need))
        return -1;
    for (int i = 0; i < n; i++)
        if (plan->cols[i].width != self->arrs[i].width)
            return -1;
    for (int i = 0; i < 2 * n; i++) {
        self->marks[i].n = self->arrs[i].n;
        self->marks[i].nulls = self->arrs[i].nulls;
        self->marks[i].data_len = self->arrs[i].data.len;
    }
    size_t p = 0, marked = self->partial.len;
    if (kind != 1)
        bma = bmb;
    /* a partial row image (binlog_row_image MINIMAL / NOBLOB, MariaDB's generated columns left
     * out): the after image's columns-present bitmap lacks a column of the table */
    uint8_t part = 0;
    if (kind != 2)
        for (int i = 0; i < n; i++)
            if (!(bma[i >> 3] >> (i & 7) & 1))
                part = 1;
    Arr *before = self->arrs, *after = self->arrs + n;
    long rows = 0;
    while (p < len) {
        size_t start = p;
        if (kind != 0 && image(self, plan, b, len, &p, bmb, before))
            goto undo;
        if (kind != 2 && image(self, plan, b, len, &p, bma, after))
            goto undo;
        if (p == start)
            goto undo;
        if (kind == 0)
            for (int i = 0; i < n; i++)
                if (arr_null(&before[i]))
                    goto undo;
        if (kind == 2)
            for (int i = 0; i < n; i++)
                if (arr_null(&after[i]))
                    goto undo;
        if (grow(&self->partial, 1))
            goto undo;
        self->partial.p[self->partial.len++] = part;
        rows++;
    }
    if (!keep) {
        for (int i = 0; i < 2 * n; i++) /* a probe: the rows counted, nothing kept */
            arr_rollback(&self->arrs[i], &self->marks[i]);
        self->partial.len = marked;
        return rows;
    }
    self->rows += rows;
    if (part)
        self->npartial += rows;
    return rows;
undo:
    for (int i = 0; i < 2 * n; i++)
        arr_rollback(&self->arrs[i], &self->marks[i]);
    self->partial.len = marked;
    return -1;
}

static PyObject *builder_add(Builder *self, PyObject *args) {
    Plan *plan;
    Py_buffer img, bb, ba;
    int kind, keep = 1;
    if (!PyArg_ParseTuple(args, "O!y*iy*y*|p", &PlanType, &plan, &img, &kind, &bb, &ba, &keep))
        return NULL;
    long added = builder_append(self, plan, img.buf, (size_t)img.len, kind, bb.buf, (size_t)bb.len, ba.buf,
                                (size_t)ba.len, keep);
    PyBuffer_Release(&img);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&ba);
    return PyLong_FromLong(added);
}

/* ---- Buffer: bytes a Builder handed out (``finish``), its memory now the buffer's: pyarrow wraps it
 * (pa.py_buffer) without copying, and frees it with the last reference ---- */
typedef struct {
    PyObject_HEAD
    uint8_t *p;
    Py_ssize_t len;
} Owned;

static void owned_dealloc(Owned *self) {
    PyMem_Free(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int owned_getbuffer(Owned *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->p ? (void *)self->p : (void *)"", self->len, 1, flags);
}

static Py_ssize_t owned_length(Owned *self) { return self->len; }

static PyBufferProcs owned_as_buffer = {(getbufferproc)owned_getbuffer, NULL};
static PySequenceMethods owned_as_sequence = {.sq_length = (lenfunc)owned_length};

static PyTypeObject OwnedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._rowarrow.Buffer",
    .tp_basicsize = sizeof(Owned),
    .tp_dealloc = (destructor)owned_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "bytes a Builder handed out (finish): a read-only buffer, its memory freed with it",
    .tp_as_buffer = &owned_as_buffer,
    .tp_as_sequence = &owned_as_sequence,
};

/* b's bytes as a Buffer; b starts again empty with a fresh allocation of the same capacity (the
 * next row group is about as big: no regrowth, and no copy of what is handed out) */
static PyObject *hand_over(Buf *b) {
    Owned *o = PyObject_New(Owned, &OwnedType);
    if (!o)
        return NULL;
    o->p = b->p;
    o->len = (Py_ssize_t)b->len;
    size_t cap = b->cap;
    b->p = NULL;
    b->len = b->cap = 0;
    grow(b, cap); /* a failure shows at the next append */
    return (PyObject *)o;
}

static PyObject *builder_finish(Builder *self, PyObject *unused) {
    int n = self->n;
    PyObject *cols = PyList_New(2 * n);
    if (!cols)
        return NULL;
    for (int i = 0; i < 2 * n; i++) {
        Arr *a = &self->arrs[i];
        if (!a->width && a->offsets.len != (size_t)(a->n + 1) * 4) {
            Py_DECREF(cols);
            return PyErr_NoMemory();
        }
        PyObject *valid = a->nulls ? hand_over(&a->valid) : Py_NewRef(Py_None);
        PyObject *offsets = a->width ? Py_NewRef(Py_None) : hand_over(&a->offsets);
        PyObject *data = a->data.p ? hand_over(&a->data) : Py_NewRef(Py_None);
        PyObject *t = valid && offsets && data ? Py_BuildValue("(OLOO)", valid, (long long)a->nulls, offsets, data)
                                               : NULL;
        Py_XDECREF(valid);
        Py_XDECREF(offsets);
        Py_XDECREF(data);
        if (!t) {
            Py_DECREF(cols);
            return NULL;
        }
        PyList_SET_ITEM(cols, i, t);
    }
    PyObject *out = Py_BuildValue("(LN)", (long long)self->rows, cols);
    for (int i = 0; i < 2 * n; i++)
        arr_reset(&self->arrs[i]);
    self->rows = 0;
    self->partial.len = 0;
    self->npartial = 0;
    return out;
}

static PyObject *builder_rows(Builder *self, void *closure) { return PyLong_FromLongLong(self->rows); }

static PyObject *builder_npartial(Builder *self, void *closure) { return PyLong_FromLongLong(self->npartial); }

static PyObject *builder_partial_rows(Builder *self, PyObject *unused) {
    return PyBytes_FromStringAndSize(self->partial.p ? (const char *)self->partial.p : "", (Py_ssize_t)self->partial.len);
}

static PyObject *builder_nbytes(Builder *self, void *closure) {
    size_t t = 0;
    for (int i = 0; i < 2 * self->n; i++)
        t += self->arrs[i].data.len + self->arrs[i].offsets.len + self->arrs[i].valid.len;
    return PyLong_FromSize_t(t);
}

static PyMethodDef builder_methods[] = {
    {"add", (PyCFunction)builder_add, METH_VARARGS,
     "add(plan, images, kind, before_bitmap, after_bitmap, keep=True) -> rows appended, or -1 (nothing "
     "appended: the event is the Python path's). kind: 0 write, 1 update, 2 delete; keep=False: count only."},
    {"finish", (PyCFunction)builder_finish, METH_NOARGS,
     "finish() -> (rows, [(validity or None, null count, offsets or None, data or None), ...]): the before "
     "columns, then the after columns, as read-only buffers (Buffer: handed over, not copied); the builder starts "
     "empty again."},
    {"partial_rows", (PyCFunction)builder_partial_rows, METH_NOARGS,
     "partial_rows() -> bytes, one per row held (until finish): 1 when the row's after image (a write's or an "
     "update's) lacks columns of the table (binlog_row_image MINIMAL / NOBLOB, generated columns left out), else 0."},
    {NULL}};

static PyGetSetDef builder_getset[] = {
    {"rows", (getter)builder_rows, NULL, "rows held", NULL},
    {"partial", (getter)builder_npartial, NULL, "rows held whose after image is partial (see partial_rows)", NULL},
    {"nbytes", (getter)builder_nbytes, NULL, "bytes held in the buffers", NULL},
    {NULL}};

static PyTypeObject BuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._rowarrow.Builder",
    .tp_basicsize = sizeof(Builder),
    .tp_dealloc = (destructor)builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Builder(widths): Arrow buffers of the before and after columns of one table layout",
    .tp_init = (initproc)builder_init,
    .tp_new = PyType_GenericNew,
    .tp_methods = builder_methods,
    .tp_getset = builder_getset,
};

/* ---- repeat: the per-event columns of a chunk (op, gtid, file, offset, ...), one value per run of rows ---- */
static PyObject *m_repeat(PyObject *mod, PyObject *args) {
    Py_buffer cb;
    PyObject *vals, *valid = NULL, *offsets = NULL, *data = NULL;
    int kind;
    if (!PyArg_ParseTuple(args, "y*O!C", &cb, &PyList_Type, &vals, &kind))
        return NULL;
    Py_ssize_t k = cb.len / 8;
    int width = kind == 'I' ? 4 : kind == 's' ? 0 : 8;
    if (cb.len % 8 || PyList_GET_SIZE(vals) != k || !(kind == 'I' || kind == 'q' || kind == 'r' || kind == 's')) {
        PyErr_SetString(PyExc_ValueError, "repeat(counts, values, kind): 8 bytes a count, a value a count, kind I q r s");
        goto fail;
    }
    const uint8_t *cp = cb.buf;
    int64_t total = 0, bytes = 0, nulls = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        int64_t c;
        memcpy(&c, cp + 8 * i, 8);
        PyObject *v = PyList_GET_ITEM(vals, i);
        if (c < 0 || c > INT32_MAX - total) {
            PyErr_SetString(PyExc_OverflowError, "repeat: a count below 0 or 2**31 rows or more");
            goto fail;
        }
        total += c;
        if (v == Py_None) {
            nulls += c;
        } else if (kind == 's') {
            Py_ssize_t len;
            if (PyUnicode_Check(v)) {
                if (!PyUnicode_AsUTF8AndSize(v, &len))
                    goto fail;
            } else if (PyBytes_Check(v)) {
                len = PyBytes_GET_SIZE(v);
            } else {
                PyErr_SetString(PyExc_TypeError, "repeat: text values are str, bytes or None");
                goto fail;
            }
            if (len && c > (INT32_MAX - bytes) / len) {
                PyErr_SetString(PyExc_OverflowError, "repeat: 2 GiB of text or more");
                goto fail;
            }
            bytes += c * len;
        }
    }
    data = PyBytes_FromStringAndSize(NULL, width ? total * width : bytes);
    if (!data)
        goto fail;
    uint8_t *d = (uint8_t *)PyBytes_AS_STRING(data), *vb = NULL;
    int32_t *off = NULL;
    if (nulls) {
        valid = PyBytes_FromStringAndSize(NULL, (total + 7) / 8);
        if (!valid)
            goto fail;
        vb = (uint8_t *)PyBytes_AS_STRING(valid);
        memset(vb, 0, (size_t)(total + 7) / 8);
    }
    if (!width) {
        offsets = PyBytes_FromStringAndSize(NULL, (total + 1) * 4);
        if (!offsets)
            goto fail;
        off = (int32_t *)PyBytes_AS_STRING(offsets);
        off[0] = 0;
    }
    int64_t row = 0, at = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        int64_t c;
        memcpy(&c, cp + 8 * i, 8);
        PyObject *v = PyList_GET_ITEM(vals, i);
        int present = v != Py_None;
        if (vb && present)
            for (int64_t j = row; j < row + c; j++)
                vb[j >> 3] |= (uint8_t)(1u << (j & 7));
        if (!width) {
            const char *t = "";
            Py_ssize_t len = 0;
            if (present) {
                if (PyUnicode_Check(v))
                    t = PyUnicode_AsUTF8AndSize(v, &len);
                else
                    PyBytes_AsStringAndSize(v, (char **)&t, &len);
            }
            for (int64_t j = 0; j < c; j++) {
                memcpy(d + at, t, (size_t)len);
                at += len;
                off[row + j + 1] = (int32_t)at;
            }
        } else if (width == 4) {
            uint32_t x = 0;
            if (present) {
                unsigned long long u = PyLong_AsUnsignedLongLong(v);
                if (PyErr_Occurred())
                    goto fail;
                if (u > UINT32_MAX) {
                    PyErr_SetString(PyExc_OverflowError, "repeat: a value past uint32");
                    goto fail;
                }
                x = (uint32_t)u;
            }
            for (int64_t j = 0; j < c; j++)
                memcpy(d + 4 * (row + j), &x, 4);
        } else {
            int64_t x = 0;
            if (present) {
                x = PyLong_AsLongLong(v);
                if (x == -1 && PyErr_Occurred())
                    goto fail;
            }
            for (int64_t j = 0; j < c; j++) {
                int64_t y = kind == 'r' && present ? (int64_t)((uint64_t)x + (uint64_t)j) : x;
                memcpy(d + 8 * (row + j), &y, 8);
            }
        }
        row += c;
    }
    PyBuffer_Release(&cb);
    PyObject *out = Py_BuildValue("(OLOO)", valid ? valid : Py_None, (long long)nulls, offsets ? offsets : Py_None,
                                  data);
    Py_XDECREF(valid);
    Py_XDECREF(offsets);
    Py_DECREF(data);
    return out;
fail:
    PyBuffer_Release(&cb);
    Py_XDECREF(valid);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    return NULL;
}

/* ---- the export walk: the plain events of an open transaction framed in C -------------------------
 * export/changes.py's taker of the one framing loop (reading.framing.walk_events(taker=...)): handed
 * the window buf[rel:filled], which holds the stream from offset ``at``, it takes the whole Table_map,
 * v1 / v2 rows, Annotate_rows and Rows_query events that follow, each whole in the window, of a sane size, its end_log_pos
 * right (or 0, or an artificial event), its CRC32 good (``crc``: the framer's own function, so the
 * verdicts are the same) and within ``room`` bytes, and stops before any other event: the Python
 * loop frames that one (and raises what it raises). The grouping scan's accounting of what it took
 * comes back in numbers (changes.py applies them as feed_frames would have). Separate from the
 * value decoders above. */
static int walk_plain(int code) {
    return code == TABLE_MAP_EVENT || (code >= WRITE_ROWS_EVENT_V1 && code <= DELETE_ROWS_EVENT_V1) ||
           (code >= WRITE_ROWS_EVENT && code <= DELETE_ROWS_EVENT);
}

/* Annotate_rows (MariaDB) and Rows_query (MySQL): the statement text before the rows events; the
 * grouping scan only counts them and export keeps nothing of them */
static int walk_note(int code) { return code == ANNOTATE_ROWS_EVENT || code == ROWS_QUERY_LOG_EVENT; }

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static PyObject *m_take_plain(PyObject *mod, PyObject *args) {
    Py_buffer w;
    Py_ssize_t rel, filled;
    long long at, room;
    int crc_on;
    PyObject *crc;
    if (!PyArg_ParseTuple(args, "y*nnLpOL", &w, &rel, &filled, &at, &crc_on, &crc, &room))
        return NULL;
    long k = 0;
    long long first_ts = -1, last_nz = -1, last_ts = 0, last_at = -1;
    int last_code = -1;
    const uint8_t *buf = w.buf;
    if (rel < 0 || filled > w.len || rel > filled)
        filled = rel = 0;
    Py_ssize_t rel0 = rel;
    while (filled - rel >= LEN_COMMON_HEADER) {
        const uint8_t *p = buf + rel;
        int code = p[4];
        uint32_t size = le32(p + 9), log_pos = le32(p + 13), ts = le32(p);
        unsigned flags = (unsigned)p[17] | (unsigned)p[18] << 8;
        if (!(walk_plain(code) || walk_note(code)) || size < (uint32_t)(LEN_COMMON_HEADER + (crc_on ? LEN_CHECKSUM : 0)) ||
            (Py_ssize_t)size > filled - rel ||
            (long long)size > room)
            break;
        long long end = at + size;
        if (log_pos && !(flags & LOG_EVENT_ARTIFICIAL_F) && log_pos != (uint32_t)(end & 0xFFFFFFFF))
            break;
        if (crc_on) {
            PyObject *mv = PyMemoryView_FromMemory((char *)p, (Py_ssize_t)size - LEN_CHECKSUM, PyBUF_READ);
            if (!mv)
                goto fail;
            PyObject *r = PyObject_CallOneArg(crc, mv);
            Py_DECREF(mv);
            if (!r)
                goto fail;
            unsigned long c = PyLong_AsUnsignedLongMask(r);
            Py_DECREF(r);
            if (c == (unsigned long)-1 && PyErr_Occurred())
                goto fail;
            if ((uint32_t)c != le32(p + size - LEN_CHECKSUM))
                break;
        }
        k++;
        room -= size;
        if (ts) {
            if (first_ts < 0)
                first_ts = ts;
            last_nz = ts;
        }
        last_ts = ts;
        last_code = code;
        last_at = at;
        rel += size;
        at = end;
    }
    PyObject *run = k ? PyBytes_FromStringAndSize((const char *)buf + rel0, rel - rel0) : Py_NewRef(Py_None);
    PyBuffer_Release(&w);
    if (!run)
        return NULL;
    return Py_BuildValue("(nLlLLLiLN)", rel, at, k, first_ts, last_nz, last_ts, last_code, last_at, run);
fail:
    PyBuffer_Release(&w);
    return NULL;
}

/* the table id a table map's / rows event's body starts with (phl: the post-header length, -1 unknown) */
static int walk_table_id(const uint8_t *b, Py_ssize_t n, int phl, uint64_t *id, Py_ssize_t *p) {
    if (phl == 6) {
        if (n < 4)
            return -1;
        *id = le32(b);
        *p = 4;
        return 0;
    }
    if (n < 6)
        return -1;
    *id = (uint64_t)le32(b) | (uint64_t)b[4] << 32 | (uint64_t)b[5] << 40;
    *p = 6;
    return 0;
}

/* a target's counters (slots of the Python list the walk and changes.py share) */
enum { T_BUILDER, T_PLAN, T_NCOLS, T_RUNS, T_ROWS, T_BYTES, T_INS, T_UPD, T_DEL, T_BASE_ROWS, T_BASE_BYTES, T_SLOTS };

static int slot_add(PyObject *t, int i, long long v) {
    PyObject *old = PyList_GET_ITEM(t, i);
    long long o = old == Py_None ? 0 : PyLong_AsLongLong(old);
    if (o == -1 && PyErr_Occurred())
        return -1;
    PyObject *nv = PyLong_FromLongLong(o + v);
    if (!nv)
        return -1;
    PyList_SET_ITEM(t, i, nv);
    Py_DECREF(old);
    return 0;
}

static long long slot(PyObject *t, int i) {
    PyObject *o = PyList_GET_ITEM(t, i);
    return o == Py_None ? 0 : PyLong_AsLongLong(o);
}

/* replay_run: the committed events of a _Run (changes.py) from byte p on, as _Walk._replay and the
 * dataset writer would take them, for as long as each is one C settles the same way: a Table_map the
 * decoder has met (``known``: its Table registered under the event's table id in ``tables``), a rows
 * event whose table has a target (``targets``: id(Table) -> the list above: the part's builder and plan,
 * made by DatasetWriter.c_target once the Python path has put an event of that table, in this
 * transaction's partition, into that builder) and whose images the builder takes whole. Per event
 * appended: its run (n, op, gtid, server id, commit time, file, offset, row index) onto the target's
 * runs, its rows and bytes onto the target's counters. Returns (p, row_index, why, target): why 0 the
 * run is done; 1 stopped before the event at p (the Python path's: anything else, nothing of it
 * done); 2 stopped after an event that brought its part or the writer to a flush threshold. */
static PyObject *m_replay_run(PyObject *mod, PyObject *args) {
    Py_buffer d;
    Py_ssize_t p;
    int hl, crc_len, phl_tm, phl_v1, phl_v2;
    PyObject *flavor, *known, *tables, *targets, *consts, *state;
    long long at0, row_index;
    if (!PyArg_ParseTuple(args, "y*niiiiiOO!O!O!O!LLO!", &d, &p, &hl, &crc_len, &phl_tm, &phl_v1, &phl_v2, &flavor,
                          &PyDict_Type, &known, &PyDict_Type, &tables, &PyDict_Type, &targets, &PyTuple_Type, &consts,
                          &at0, &row_index, &PyList_Type, &state))
        return NULL;
    /* consts: (insert, update, delete, gtid, server id, commit time, file); state: [writer rows, writer
     * bytes, row group rows, row group bytes, writer rows limit, writer bytes limit] */
    if (PyTuple_GET_SIZE(consts) != 7 || PyList_GET_SIZE(state) != 6) {
        PyBuffer_Release(&d);
        PyErr_SetString(PyExc_ValueError, "replay_run: consts of 7, state of 6");
        return NULL;
    }
    long long lim[6];
    for (int i = 0; i < 6; i++) {
        lim[i] = PyLong_AsLongLong(PyList_GET_ITEM(state, i));
        if (lim[i] == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&d);
            return NULL;
        }
    }
    const uint8_t *data = d.buf;
    Py_ssize_t len = d.len;
    int why = 0;
    PyObject *last = Py_None;
    long long g_rows = 0, g_bytes = 0;
    if (p < 0)
        p = len;
    while (p < len) {
        if (len - p < LEN_COMMON_HEADER) {
            why = 1;
            break;
        }
        const uint8_t *e = data + p;
        int code = e[4];
        uint32_t size = le32(e + 9);
        Py_ssize_t blen = (Py_ssize_t)size - hl - crc_len;
        if ((Py_ssize_t)size > len - p || hl < LEN_COMMON_HEADER || crc_len < 0 || blen < 0) {
            why = 1;
            break;
        }
        const uint8_t *b = e + hl;
        uint64_t id;
        Py_ssize_t q;
        if (walk_note(code)) { /* not spooled by the Python path: nothing to do */
            p += size;
            continue;
        }
        if (code == TABLE_MAP_EVENT) { /* a table map met before (the decoder's register, without decoding it again) */
            PyObject *body = PyBytes_FromStringAndSize((const char *)b, blen);
            if (!body)
                goto fail;
            PyObject *key = PyTuple_Pack(2, flavor, body);
            Py_DECREF(body);
            if (!key)
                goto fail;
            PyObject *table = PyDict_GetItemWithError(known, key);
            Py_DECREF(key);
            if (!table) {
                if (PyErr_Occurred())
                    goto fail;
                why = 1;
                break;
            }
            if (walk_table_id(b, blen, phl_tm, &id, &q)) {
                why = 1;
                break;
            }
            PyObject *k = PyLong_FromUnsignedLongLong(id);
            if (!k)
                goto fail;
            int r = PyDict_SetItem(tables, k, table);
            Py_DECREF(k);
            if (r)
                goto fail;
            p += size;
            continue;
        }
        if (!walk_plain(code)) {
            why = 1;
            break;
        }
        /* codecs.fast.rows' reading, each of its irregular cases left to Python */
        int v2 = code >= WRITE_ROWS_EVENT;
        if (walk_table_id(b, blen, v2 ? phl_v2 : phl_v1, &id, &q) || blen < q + 2) {
            why = 1;
            break;
        }
        q += 2; /* flags */
        if (v2) {
            if (blen < q + 2) {
                why = 1;
                break;
            }
            Py_ssize_t extra = (Py_ssize_t)b[q] | (Py_ssize_t)b[q + 1] << 8;
            q += 2 + (extra > 2 ? extra - 2 : 0);
        }
        if (blen < q + 1) {
            why = 1;
            break;
        }
        uint64_t width;
        int first = b[q];
        if (first < 251) {
            width = (uint64_t)first;
            q += 1;
        } else {
            int w = first == 252 ? 2 : first == 253 ? 3 : first == 254 ? 8 : 0;
            if (!w || blen < q + 1 + w) {
                why = 1;
                break;
            }
            width = 0;
            for (int i = w; i >= 1; i--)
                width = width << 8 | b[q + i];
            q += 1 + w;
        }
        if (width > (uint64_t)blen * 8 + 8) { /* the bitmaps alone would run past the body */
            why = 1;
            break;
        }
        Py_ssize_t nb = (Py_ssize_t)((width + 7) / 8);
        int kind = (code == WRITE_ROWS_EVENT_V1 || code == WRITE_ROWS_EVENT)    ? 0
                   : (code == DELETE_ROWS_EVENT_V1 || code == DELETE_ROWS_EVENT) ? 2
                                                                                 : 1;
        const uint8_t *bmb = b + q, *bma = NULL;
        Py_ssize_t bblen = nb < blen - q ? nb : blen - q, balen = 0;
        q += nb;
        if (kind == 1) {
            Py_ssize_t left = blen - q;
            bma = b + (q < blen ? q : blen);
            balen = left < 0 ? 0 : (nb < left ? nb : left);
            q += nb;
        }
        if (q > blen) {
            why = 1;
            break;
        }
        PyObject *k = PyLong_FromUnsignedLongLong(id);
        if (!k)
            goto fail;
        PyObject *src = PyDict_GetItemWithError(tables, k);
        Py_DECREF(k);
        PyObject *t = NULL;
        if (src) { /* targets are keyed by the Table's id (a Table's own hash walks its columns) */
            PyObject *tk = PyLong_FromVoidPtr(src);
            if (!tk)
                goto fail;
            t = PyDict_GetItemWithError(targets, tk);
            Py_DECREF(tk);
        }
        if (!t) {
            if (PyErr_Occurred())
                goto fail;
            why = 1;
            break;
        }
        if (!PyList_Check(t) || PyList_GET_SIZE(t) < T_SLOTS ||
            !PyObject_TypeCheck(PyList_GET_ITEM(t, T_BUILDER), &BuilderType) ||
            !PyObject_TypeCheck(PyList_GET_ITEM(t, T_PLAN), &PlanType) || !PyList_Check(PyList_GET_ITEM(t, T_RUNS))) {
            PyErr_SetString(PyExc_TypeError, "replay_run: a target is [Builder, Plan, columns, runs, ...]");
            goto fail;
        }
        long long ncols = slot(t, T_NCOLS);
        if (ncols == -1 && PyErr_Occurred())
            goto fail;
        if ((uint64_t)ncols != width) { /* arrow_inputs: the table map's width only */
            why = 1;
            break;
        }
        Builder *bu = (Builder *)PyList_GET_ITEM(t, T_BUILDER);
        long n = builder_append(bu, (const Plan *)PyList_GET_ITEM(t, T_PLAN), b + q, (size_t)(blen - q), kind, bmb,
                                (size_t)bblen, kind == 1 ? bma : (const uint8_t *)"", (size_t)balen, 1);
        if (n < 0) { /* nothing appended: the Python path decodes it (or reports it) */
            why = 1;
            break;
        }
        int op = kind == 0 ? 0 : kind == 2 ? 2 : 1;
        if (n) {
            PyObject *run = Py_BuildValue("(lOOOOOLL)", n, PyTuple_GET_ITEM(consts, op), PyTuple_GET_ITEM(consts, 3),
                                          PyTuple_GET_ITEM(consts, 4), PyTuple_GET_ITEM(consts, 5),
                                          PyTuple_GET_ITEM(consts, 6), at0 + (long long)p, row_index);
            if (!run)
                goto fail;
            int r = PyList_Append(PyList_GET_ITEM(t, T_RUNS), run);
            Py_DECREF(run);
            if (r)
                goto fail;
        }
        if (slot_add(t, T_ROWS, n) || slot_add(t, T_BYTES, size) || slot_add(t, T_INS + op, n))
            goto fail;
        row_index += n;
        g_rows += n;
        g_bytes += size;
        p += size;
        long long pr = slot(t, T_BASE_ROWS) + slot(t, T_ROWS), pb = slot(t, T_BASE_BYTES) + slot(t, T_BYTES);
        if (PyErr_Occurred())
            goto fail;
        if (pr >= lim[2] || pb >= lim[3] || lim[0] + g_rows >= lim[4] || lim[1] + g_bytes >= lim[5]) {
            why = 2;
            last = t;
            break;
        }
    }
    PyBuffer_Release(&d);
    return Py_BuildValue("(nLiO)", p, row_index, why, last);
fail:
    PyBuffer_Release(&d);
    return NULL;
}

/* ---- the long form's images: JSON objects of a batch's columns (binlogkit/spark/changes.py) ----- */
/* One column of json_objects: its key ("name": ) and Arrow buffers (validity, values, offsets),
 * the array's offset; kind: b h i q (signed 1 2 4 8 bytes), B H I Q (unsigned), ? (bool bitmap),
 * f d (float32, float64), s S (UTF-8 text, int32 / int64 offsets), y Y (binary, base64), t (JSON
 * texts already made, int32 offsets: copied as they are), D (date32), T M (timestamp int64 in
 * ``param`` units a second: UTC, naive), u (duration[us]), N (decimal128 of scale ``param``): the
 * last four as the quoted text of json_value (isoformat, str(timedelta), str(Decimal)). */
typedef struct {
    Py_buffer key, valid, vals, offs;
    int kind, has_valid, has_offs;
    int64_t off, param; /* param: units a second (T M), the scale (N) */
} JCol;

static const char HEX[] = "0123456789abcdef";

/* text as json.dumps writes a str (ensure_ascii: printable ASCII as it is, \\ \" \b \f \n \r \t,
 * else \u00XX, non-ASCII as \uXXXX or a surrogate pair); -1 on UTF-8 that does not decode */
static int put_pystr(Buf *o, const uint8_t *s, size_t n) {
    if (grow(o, 12 * n + 2))
        return -1;
    uint8_t *d = o->p + o->len;
    *d++ = '"';
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
            *d++ = c;
            i++;
            continue;
        }
        uint32_t cp;
        if (c < 0x80) {
            cp = c;
            i++;
            uint8_t e = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't'
                      : c == '\b' ? 'b' : c == '\f' ? 'f' : 0;
            if (e) {
                *d++ = '\\';
                *d++ = e;
                continue;
            }
        } else {
            int k = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
            if (k < 0 || i + (size_t)k >= n)
                return -1;
            cp = c & (0x3f >> k);
            for (int j = 1; j <= k; j++) {
                uint8_t t = s[i + (size_t)j];
                if ((t & 0xc0) != 0x80)
                    return -1;
                cp = cp << 6 | (t & 0x3f);
            }
            i += (size_t)k + 1;
        }
        if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000, hi = 0xd800 | (v >> 10), lo = 0xdc00 | (v & 0x3ff);
            uint32_t two[2] = {hi, lo};
            for (int j = 0; j < 2; j++) {
                *d++ = '\\', *d++ = 'u';
                for (int sh = 12; sh >= 0; sh -= 4)
                    *d++ = (uint8_t)HEX[(two[j] >> sh) & 15];
            }
        } else {
            *d++ = '\\', *d++ = 'u';
            for (int sh = 12; sh >= 0; sh -= 4)
                *d++ = (uint8_t)HEX[(cp >> sh) & 15];
        }
    }
    *d++ = '"';
    o->len = (size_t)(d - o->p);
    return 0;
}

/* bytes as base64 text in quotes (json_value: base64.b64encode) */
static int put_b64(Buf *o, const uint8_t *s, size_t n) {
    if (grow(o, (n + 2) / 3 * 4 + 2))
        return -1;
    uint8_t *d = o->p + o->len;
    *d++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        d[0] = (uint8_t)B64[v >> 18], d[1] = (uint8_t)B64[(v >> 12) & 63], d[2] = (uint8_t)B64[(v >> 6) & 63];
        d[3] = (uint8_t)B64[v & 63];
        d += 4;
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        d[0] = (uint8_t)B64[v >> 18], d[1] = (uint8_t)B64[(v >> 12) & 63], d[2] = '=', d[3] = '=';
        d += 4;
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        d[0] = (uint8_t)B64[v >> 18], d[1] = (uint8_t)B64[(v >> 12) & 63], d[2] = (uint8_t)B64[(v >> 6) & 63];
        d[3] = '=';
        d += 4;
    }
    *d++ = '"';
    o->len = (size_t)(d - o->p);
    return 0;
}

static int put_u64(Buf *o, uint64_t v, int neg);
static int put_i64(Buf *o, int64_t x) { return put_u64(o, x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x, x < 0); }

static int put_u64(Buf *o, uint64_t v, int neg) {
    char t[24];
    int k = 24;
    do {
        t[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        t[--k] = '-';
    return put(o, t + k, (size_t)(24 - k));
}

static int bit_at(const uint8_t *b, int64_t i) { return (b[i >> 3] >> (i & 7)) & 1; }

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* days since 1970-01-01 as a proleptic Gregorian date (H. Hinnant's civil_from_days) */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* "YYYY-MM-DD" of a day (datetime.date's range: years 1 to 9999, else -1) */
static int put_day(Buf *o, int64_t days) {
    if (days < -719162 || days > 2932896)
        return -1;
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    return putf(o, "%04lld-%02u-%02u", (long long)y, m, d);
}

/* a timestamp of ``ups`` units a second as datetime.isoformat() writes it, in quotes */
static int put_ts(Buf *o, int64_t v, int64_t ups, int utc) {
    if (ups != 1 && ups != 1000 && ups != 1000000)
        return -1;
    int64_t per_day = 86400 * ups, days = floor_div(v, per_day), rem = v % per_day;
    if (rem < 0)
        rem += per_day;
    int64_t secs = rem / ups, us = rem % ups * (1000000 / ups);
    if (put(o, "\"", 1) || put_day(o, days) ||
        putf(o, "T%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60)))
        return -1;
    if (us && putf(o, ".%06d", (int)us))
        return -1;
    return put(o, utc ? "+00:00\"" : "\"", utc ? 7 : 1);
}

/* microseconds as str(datetime.timedelta) writes them, in quotes */
static int put_td(Buf *o, int64_t x) {
    int64_t per_day = 86400000000LL, days = floor_div(x, per_day), rem = x % per_day;
    if (rem < 0)
        rem += per_day;
    int64_t secs = rem / 1000000, us = rem % 1000000;
    if (days < -999999999 || days > 999999999 || put(o, "\"", 1))
        return -1;
    if (days && putf(o, "%lld day%s, ", (long long)days, days == 1 || days == -1 ? "" : "s"))
        return -1;
    if (putf(o, "%d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60)))
        return -1;
    if (us && putf(o, ".%06d", (int)us))
        return -1;
    return put(o, "\"", 1);
}

/* a decimal128 (16 bytes little-endian, two's complement) of ``scale`` as str(Decimal) writes
 * it (plain, or scientific where the exponent rule says: 1E-7, 0E-7), in quotes */
static int put_dec128(Buf *o, const uint8_t *p, int64_t scale) {
    if (scale < 0 || scale > 38)
        return -1;
    unsigned __int128 u = 0;
    for (int i = 15; i >= 0; i--)
        u = u << 8 | p[i];
    int neg = (p[15] & 0x80) != 0;
    if (neg)
        u = ~u + 1;
    char dg[48];
    int k = 48;
    do {
        dg[--k] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    int nd = 48 - k;
    const char *digits = dg + k;
    int64_t exp = -scale, left = exp + nd, dot = (exp <= 0 && left > -6) ? left : 1;
    if (put(o, neg ? "\"-" : "\"", neg ? 2 : 1))
        return -1;
    if (dot <= 0) {
        if (put(o, "0.", 2))
            return -1;
        for (int64_t i = 0; i < -dot; i++)
            if (put(o, "0", 1))
                return -1;
        if (put(o, digits, (size_t)nd))
            return -1;
    } else if (dot >= nd) {
        if (put(o, digits, (size_t)nd))
            return -1;
        for (int64_t i = 0; i < dot - nd; i++)
            if (put(o, "0", 1))
                return -1;
    } else if (put(o, digits, (size_t)dot) || put(o, ".", 1) || put(o, digits + dot, (size_t)(nd - dot)))
        return -1;
    if (left != dot && putf(o, "E%+lld", (long long)(left - dot)))
        return -1;
    return put(o, "\"", 1);
}

/* the value of row i of column c (not null) */
static int jcol_value(Buf *o, const JCol *c, int64_t i) {
    const uint8_t *v = c->vals.buf;
    int64_t r = i + c->off;
    switch (c->kind) {
    case 'b': return put_i64(o, ((const int8_t *)v)[r]);
    case 'h': { int16_t x; memcpy(&x, v + 2 * r, 2); return put_i64(o, x); }
    case 'i': { int32_t x; memcpy(&x, v + 4 * r, 4); return put_i64(o, x); }
    case 'q': { int64_t x; memcpy(&x, v + 8 * r, 8); return put_i64(o, x); }
    case 'B': return put_u64(o, v[r], 0);
    case 'H': { uint16_t x; memcpy(&x, v + 2 * r, 2); return put_u64(o, x, 0); }
    case 'I': { uint32_t x; memcpy(&x, v + 4 * r, 4); return put_u64(o, x, 0); }
    case 'Q': { uint64_t x; memcpy(&x, v + 8 * r, 8); return put_u64(o, x, 0); }
    case '?': return bit_at(v, r) ? put(o, "true", 4) : put(o, "false", 5);
    case 'f': { float x; memcpy(&x, v + 4 * r, 4); return put_double(o, (double)x); }
    case 'd': { double x; memcpy(&x, v + 8 * r, 8); return put_double(o, x); }
    case 'D': { int32_t x; memcpy(&x, v + 4 * r, 4); return put(o, "\"", 1) || put_day(o, x) || put(o, "\"", 1) ? -1 : 0; }
    case 'T': case 'M': { int64_t x; memcpy(&x, v + 8 * r, 8); return put_ts(o, x, c->param, c->kind == 'T'); }
    case 'u': { int64_t x; memcpy(&x, v + 8 * r, 8); return put_td(o, x); }
    case 'N': return put_dec128(o, v + 16 * r, c->param);
    default: break;
    }
    const uint8_t *ob = c->offs.buf;
    int64_t a, b;
    if (c->kind == 'S' || c->kind == 'Y') {
        memcpy(&a, ob + 8 * r, 8);
        memcpy(&b, ob + 8 * (r + 1), 8);
    } else {
        int32_t a4, b4;
        memcpy(&a4, ob + 4 * r, 4);
        memcpy(&b4, ob + 4 * (r + 1), 4);
        a = a4, b = b4;
    }
    if (a < 0 || b < a || b > c->vals.len)
        return -1;
    if (c->kind == 's' || c->kind == 'S')
        return put_pystr(o, v + a, (size_t)(b - a));
    if (c->kind == 'y' || c->kind == 'Y')
        return put_b64(o, v + a, (size_t)(b - a));
    return put(o, v + a, (size_t)(b - a));
}

/* b's bytes as a Buffer (handed over, not copied); b is left empty */
static PyObject *give(Buf *b) {
    Owned *o = PyObject_New(Owned, &OwnedType);
    if (!o)
        return NULL;
    o->p = b->p;
    o->len = (Py_ssize_t)b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return (PyObject *)o;
}

static void jcols_release(JCol *cs, Py_ssize_t k) {
    for (Py_ssize_t j = 0; j < k; j++) {
        PyBuffer_Release(&cs[j].key);
        PyBuffer_Release(&cs[j].vals);
        if (cs[j].has_valid)
            PyBuffer_Release(&cs[j].valid);
        if (cs[j].has_offs)
            PyBuffer_Release(&cs[j].offs);
    }
    PyMem_Free(cs);
}

static PyObject *m_json_objects(PyObject *mod, PyObject *args) {
    long long n;
    PyObject *cols;
    if (!PyArg_ParseTuple(args, "LO!", &n, &PyList_Type, &cols))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(cols);
    JCol *cs = PyMem_Calloc((size_t)(k ? k : 1), sizeof(JCol));
    if (!cs)
        return PyErr_NoMemory();
    Py_ssize_t got = 0;
    PyObject *valid = NULL, *res = NULL;
    Buf offs = {0}, data = {0};
    for (; got < k; got++) {
        JCol *c = &cs[got];
        PyObject *vb, *ob;
        int kind;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(cols, got), "y*CLOy*O|L", &c->key, &kind, &c->off, &vb, &c->vals, &ob,
                              &c->param))
            goto done;
        c->kind = kind;
        if (vb != Py_None) {
            if (PyObject_GetBuffer(vb, &c->valid, PyBUF_SIMPLE) < 0)
                goto next_fail;
            c->has_valid = 1;
        }
        if (ob != Py_None) {
            if (PyObject_GetBuffer(ob, &c->offs, PyBUF_SIMPLE) < 0)
                goto next_fail;
            c->has_offs = 1;
        }
        if (!kind || !strchr("bhiqBHIQ?fdsSyYtDTMuN", kind) || c->off < 0 ||
            (strchr("sSyYt", kind) && !c->has_offs)) {
            PyErr_SetString(PyExc_ValueError, "json_objects: a column of an unknown kind, or text without offsets");
            goto next_fail;
        }
        int64_t last = c->off + n;
        int w = strchr("bB", kind) ? 1 : strchr("hH", kind) ? 2 : strchr("iIfD", kind) ? 4 : strchr("qQdTMu", kind) ? 8
              : kind == 'N' ? 16 : 0;
        if ((kind == '?' && (last + 7) / 8 > c->vals.len) || (w && last * w > c->vals.len) ||
            (c->has_valid && (last + 7) / 8 > c->valid.len) ||
            (c->has_offs && (last + 1) * (strchr("SY", kind) ? 8 : 4) > c->offs.len)) {
            PyErr_SetString(PyExc_ValueError, "json_objects: a buffer shorter than its rows");
            goto next_fail;
        }
        continue;
    next_fail:
        got++;
        goto done;
    }
    if (n < 0 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "json_objects: rows out of range");
        goto done;
    }
    valid = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((n + 7) / 8));
    if (!valid || grow(&offs, (size_t)(n + 1) * 4))
        goto nomem;
    uint8_t *vb = (uint8_t *)PyBytes_AS_STRING(valid);
    memset(vb, 0, (size_t)((n + 7) / 8));
    int64_t nulls = 0;
    int32_t zero = 0;
    memcpy(offs.p, &zero, 4);
    offs.len = 4;
    for (int64_t i = 0; i < n; i++) {
        size_t start = data.len;
        int any = 0;
        if (put(&data, "{", 1))
            goto nomem;
        for (Py_ssize_t j = 0; j < k; j++) {
            const JCol *c = &cs[j];
            if (j && put(&data, ", ", 2))
                goto nomem;
            if (put(&data, c->key.buf, (size_t)c->key.len))
                goto nomem;
            if (c->has_valid && !bit_at(c->valid.buf, i + c->off)) {
                if (put(&data, "null", 4))
                    goto nomem;
                continue;
            }
            any = 1;
            if (jcol_value(&data, c, i)) {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_ValueError, "json_objects: row %lld of a column of kind %c does not decode",
                                 (long long)i, c->kind);
                goto done;
            }
        }
        if (any) {
            if (put(&data, "}", 1))
                goto nomem;
            vb[i >> 3] |= (uint8_t)(1u << (i & 7));
        } else {
            data.len = start;
            nulls++;
        }
        if (data.len > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "json_objects: 2 GiB of text or more");
            goto done;
        }
        int32_t o32 = (int32_t)data.len;
        memcpy(offs.p + offs.len, &o32, 4);
        offs.len += 4;
    }
    {
        PyObject *ob = give(&offs), *db = ob ? give(&data) : NULL;
        if (db)
            res = Py_BuildValue("(OLNN)", nulls ? valid : Py_None, (long long)nulls, ob, db);
        else
            Py_XDECREF(ob);
    }
    goto done;
nomem:
    if (!PyErr_Occurred())
        PyErr_NoMemory();
done:
    jcols_release(cs, got);
    Py_XDECREF(valid);
    PyMem_Free(offs.p);
    PyMem_Free(data.p);
    return res;
}

static PyMethodDef module_methods[] = {
    {"take_plain", (PyCFunction)m_take_plain, METH_VARARGS,
     "take_plain(buf, rel, filled, at, crc_on, crc, room) -> (rel, at, events, first ts or -1, last non-zero ts or -1, "
     "last ts, last type code, last offset, their bytes or None): the Table_map, rows, Annotate_rows and Rows_query events framed from buf[rel:filled] (the stream "
     "from offset at), export's taker; stops before any other."},
    {"replay_run", (PyCFunction)m_replay_run, METH_VARARGS,
     "replay_run(data, p, header_len, checksum_len, phl_table_map, phl_rows_v1, phl_rows_v2, flavor, known, tables, "
     "targets, consts, at, row_index, state) -> (p, row_index, why, target): a _Run's committed events into their "
     "targets' builders (export/changes.py's _Walk._replay_run)."},
    {"repeat", (PyCFunction)m_repeat, METH_VARARGS,
     "repeat(counts, values, kind) -> (validity or None, null count, offsets or None, data): each value repeated its "
     "count (counts: int64 little-endian) as an Arrow column; kind 'I' uint32, 'q' int64, 'r' int64 counting up from "
     "the value, 's' text (str as UTF-8, or bytes); None values are nulls."},
    {"bounds", (PyCFunction)m_bounds, METH_VARARGS,
     "bounds(plan, rows, update) -> [(image, None or after image), ...] cut by a plan of SKIP columns, or None "
     "(an image past the rows, a column not SKIP: the Python path's)"},
    {"json_objects", (PyCFunction)m_json_objects, METH_VARARGS,
     "json_objects(n, columns) -> (validity or None, null count, offsets, data): per row, the JSON object of the "
     "columns' values (json.dumps(..., sort_keys=True) of the long form's image, the keys in the order given), null "
     "where every value is null; columns: [(key prefix bytes, kind, array offset, validity or None, values, offsets "
     "or None[, units a second or scale])], kind b h i q B H I Q ? f d s S y Y t D T M u N."},
    {"quarter", (PyCFunction)m_quarter, METH_VARARGS,
     "quarter(offsets) -> offsets: int32 byte offsets as offsets of 4-byte items (a VECTOR column's list<float32>)"},
    {NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowarrow",
                                    "Row images into Arrow column buffers (binlogkit/export's accelerator).", -1,
                                    module_methods};

PyMODINIT_FUNC PyInit__rowarrow(void) {
    if (PyType_Ready(&PlanType) < 0 || PyType_Ready(&BuilderType) < 0 || PyType_Ready(&OwnedType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&PlanType);
    Py_INCREF(&BuilderType);
    if (PyModule_AddObject(m, "Plan", (PyObject *)&PlanType) < 0 ||
        PyModule_AddObject(m, "Builder", (PyObject *)&BuilderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    static const char *names[] = {"INT", "F32", "F64", "DEC", "YEAR", "DATE", "DT2", "TS2", "TIME2", "DT", "TS",
                                  "TIME", "UTF8", "ASCII", "BIN", "ENUM", "SET", "BIT", "GEOM", "LATIN1", "SETL",
                                  "JSON", "VEC", "SKIP", "ENUML"};
    for (int k = K_INT; k < K_LAST; k++)
        if (PyModule_AddIntConstant(m, names[k - 1], k) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
