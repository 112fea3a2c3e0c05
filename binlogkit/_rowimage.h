/*
 * binlogkit/_rowimage.h: the `decode -v` text of row images (rowvalues.verbose_lines' lines), shared
 * by binlogkit._rowtext (its verbose() / rows()) and binlogkit._fastdecode (the replayable loop's
 * `###` rows after each BINLOG block). Header-only (static): each module gets its own copy, none
 * links against another. rowvalues/images.py stays the reference: every function here returns -1
 * (not for us) for a type it does not print (JSON, old DECIMAL...), a value that is not finite or
 * an image that runs past its end, and the caller takes the Python path. Every read is
 * bounds-checked against the image's end.
 */
#ifndef BINLOGKIT_ROWIMAGE_H
#define BINLOGKIT_ROWIMAGE_H

#include <Python.h>
#include <datetime.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "_constants.h"
#include "_out.h"

#ifndef PUTS
#define PUTS(o, s) put((o), (s), (Py_ssize_t)(sizeof(s) - 1))
#endif

/* for _rowtext.rows(): the Python types values are made of (set once by _rowtext.configure(); the
   text alone -- Made.want 0, all _fastdecode asks for -- never touches them, nor the datetime API) */
static PyObject *DecimalType, *GeometryType, *TimestampFn;

/* a Python value for a column, or NULL with no exception: not for us (the Python path decides) */
typedef struct {
    PyObject *obj; /* the value made, when asked for */
    int want;      /* make it? */
    int pad;       /* BINARY(n): pad the bytes with zeros to n */
    int esc;       /* strings as MySQL 8.0+'s mysqlbinlog quotes them (flavor.tool_escapes_strings) */
} Made;

/* whether a failure was ours to hide (fall back to Python) or a real error (memory) */
static int hard_error(void) {
    if (!PyErr_Occurred())
        return 0;
    if (PyErr_ExceptionMatches(PyExc_MemoryError))
        return 1;
    PyErr_Clear();
    return 0;
}


static int put_i64(Out *o, int64_t v) {
    if (v < 0) {
        if (put(o, "-", 1))
            return -1;
        return put_u64(o, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(o, (uint64_t)v);
}

static int putf(Out *o, const char *fmt, ...) {
    char tmp[160];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof tmp)
        return -1;
    return put(o, tmp, n);
}

static uint64_t be(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* does any byte of x fall below 0x20? (the classic "has less than" word trick) */
#define HAS_CONTROL(x) (((x) - 0x2020202020202020ULL) & ~(x) & 0x8080808080808080ULL)
/* is any byte of x zero? and so: is any byte of x equal to b? */
#define HAS_ZERO(x) (((x) - 0x0101010101010101ULL) & ~(x) & 0x8080808080808080ULL)
#define HAS_BYTE(x, b) HAS_ZERO((x) ^ (0x0101010101010101ULL * (b)))

/* a byte quote() escapes: below 0x20, and with esc ' and \ too */
static inline int special(unsigned char c, int esc) { return c < 0x20 || (esc && (c == '\'' || c == '\\')); }

/* 'bytes' as the tool prints a string: control bytes as \xNN (mariadb-binlog; esc 0), or with
   esc as MySQL 8.0+'s mysqlbinlog (its quote table): \b \f \n \r \t \\ \' by name, other control
   bytes as \xNN. Runs of other bytes are copied whole, found eight bytes at a time. */
static int quote(Out *o, const unsigned char *s, Py_ssize_t n, int esc) {
    if (grow(o, n * 4 + 2))
        return -1;
    char *w = o->buf + o->len;
    *w++ = '\'';
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t j = i;
        while (j + 8 <= n) {
            uint64_t x;
            memcpy(&x, s + j, 8);
            if (HAS_CONTROL(x) || (esc && (HAS_BYTE(x, '\'') || HAS_BYTE(x, '\\'))))
                break;
            j += 8;
        }
        while (j < n && !special(s[j], esc))
            j++;
        memcpy(w, s + i, j - i);
        w += j - i;
        i = j;
        if (i < n) {
            static const char hex[] = "0123456789abcdef";
            unsigned char c = s[i++];
            char named = 0;
            if (esc) {
                switch (c) {
                case '\b': named = 'b'; break;
                case '\f': named = 'f'; break;
                case '\n': named = 'n'; break;
                case '\r': named = 'r'; break;
                case '\t': named = 't'; break;
                case '\\': named = '\\'; break;
                case '\'': named = '\''; break;
                }
            }
            *w++ = '\\';
            if (named) {
                *w++ = named;
                continue;
            }
            *w++ = 'x';
            *w++ = hex[c >> 4];
            *w++ = hex[c & 15];
        }
    }
    *w++ = '\'';
    o->len = w - o->buf;
    return 0;
}

static int bits(Out *o, uint64_t v, int nbits) {
    if (grow(o, nbits + 3))
        return -1;
    char *w = o->buf + o->len;
    *w++ = 'b';
    *w++ = '\'';
    for (int i = nbits - 1; i >= 0; i--)
        *w++ = (v >> i) & 1 ? '1' : '0';
    *w++ = '\'';
    o->len = w - o->buf;
    return 0;
}

static const int DIG2BYTES[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

static int dec_size(int digits) { return digits / 9 * 4 + DIG2BYTES[digits % 9]; }

/* DECIMAL(precision, scale) in MySQL's binary form, printed as exact digits */
static int decimal(Out *o, const unsigned char *p, const unsigned char *end, int precision, int scale,
                   Py_ssize_t *used) {
    int intg = precision - scale;
    if (intg < 0 || precision > 65 || scale > 30)
        return -1;
    int size = dec_size(intg) + dec_size(scale);
    if (size <= 0 || size > 40 || p + size > end)
        return -1;
    unsigned char raw[40];
    memcpy(raw, p, size);
    int negative = !(raw[0] & 0x80);
    raw[0] ^= 0x80;
    if (negative)
        for (int i = 0; i < size; i++)
            raw[i] ^= 0xFF;
    char digits[100];
    int nd = 0, q = 0;
    int lead = intg % 9;
    if (lead) {
        int s = DIG2BYTES[lead];
        uint64_t v = be(raw, s);
        if (v >= 1000000000ULL)
            return -1;
        nd += snprintf(digits + nd, sizeof digits - nd, "%0*llu", lead, (unsigned long long)v);
        q += s;
    }
    for (int i = 0; i < intg / 9; i++) {
        uint64_t v = be(raw + q, 4);
        if (v >= 1000000000ULL)
            return -1;
        nd += snprintf(digits + nd, sizeof digits - nd, "%09llu", (unsigned long long)v);
        q += 4;
    }
    /* Python: "".join(groups).lstrip("0") or "0"; a group may print wider than its digits
       only when the stored value is out of range, which is refused above */
    int start = 0;
    while (start < nd && digits[start] == '0')
        start++;
    if (negative && PUTS(o, "-"))
        return -1;
    if (start == nd) {
        if (PUTS(o, "0"))
            return -1;
    } else if (put(o, digits + start, nd - start)) {
        return -1;
    }
    if (scale) {
        if (PUTS(o, "."))
            return -1;
        for (int i = 0; i < scale / 9; i++) {
            uint64_t v = be(raw + q, 4);
            if (v >= 1000000000ULL)
                return -1;
            if (putf(o, "%09llu", (unsigned long long)v))
                return -1;
            q += 4;
        }
        int rest = scale % 9;
        if (rest) {
            int s = DIG2BYTES[rest];
            uint64_t v = be(raw + q, s);
            static const uint64_t lim[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                             1000000000};
            if (v >= lim[rest])
                return -1;
            if (putf(o, "%0*llu", rest, (unsigned long long)v))
                return -1;
            q += s;
        }
    }
    *used = size;
    return 0;
}

/* fractional seconds: (fsp + 1) / 2 bytes big-endian, as microseconds */
static int frac(const unsigned char **pp, const unsigned char *end, int fsp, long *us) {
    int n = (fsp + 1) / 2;
    *us = 0;
    if (!n)
        return 0;
    if (*pp + n > end)
        return -1;
    long v = (long)be(*pp, n);
    static const long mul[4] = {1000000, 10000, 100, 1};
    *us = v * mul[n];
    *pp += n;
    return 0;
}

static int frac_text(Out *o, long us, int m) {
    char six[16];
    snprintf(six, sizeof six, "%06ld", us);
    if (strlen(six) != 6)
        return -1; /* out-of-range fraction: the Python path prints what it prints */
    if (PUTS(o, "."))
        return -1;
    return put(o, six, m);
}

static Py_ssize_t prefixed(const unsigned char *p, const unsigned char *end, int lb, const unsigned char **val) {
    if (p + lb > end)
        return -1;
    uint64_t n = le(p, lb);
    if ((uint64_t)(end - (p + lb)) < n)
        return -1;
    *val = p + lb;
    return (Py_ssize_t)n;
}

/* one value; returns the bytes it used, or -1 (not for us: fall back to Python) */
static Py_ssize_t value(Out *o, int t, int m, const unsigned char *p, const unsigned char *end, Made *mk) {
    const unsigned char *q = p;
    Py_ssize_t start = o->len;
    switch (t) {
    case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_INT24: case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG: {
        int n = t == MYSQL_TYPE_TINY    ? 1
                : t == MYSQL_TYPE_SHORT ? 2
                : t == MYSQL_TYPE_INT24 ? 3
                : t == MYSQL_TYPE_LONG  ? 4
                                        : 8;
        if (p + n > end)
            return -1;
        uint64_t u = le(p, n);
        if ((u >> (8 * n - 1)) & 1) { /* negative: the signed value, then the unsigned one */
            int64_t s = n < 8 ? (int64_t)u - ((int64_t)1 << (8 * n)) : (int64_t)u;
            if (put_i64(o, s) || put(o, " (", 2) || put_u64(o, u) || put(o, ")", 1))
                return -1;
        } else if (put_u64(o, u)) {
            return -1;
        }
        if (mk->want && !(mk->obj = ((u >> (8 * n - 1)) & 1)
                                        ? PyLong_FromLongLong(n < 8 ? (int64_t)u - ((int64_t)1 << (8 * n)) : (int64_t)u)
                                        : PyLong_FromUnsignedLongLong(u)))
            return -1;
        return n;
    }
    case MYSQL_TYPE_FLOAT: {
        if (p + 4 > end)
            return -1;
        float f;
        uint32_t u = (uint32_t)le(p, 4);
        memcpy(&f, &u, 4);
        if (!isfinite(f) || putf(o, "%-20g", (double)f)) /* mysqlbinlog pads FLOAT to 20 columns */
            return -1;
        if (mk->want && !(mk->obj = PyFloat_FromDouble((double)f)))
            return -1;
        return 4;
    }
    case MYSQL_TYPE_DOUBLE: {
        if (p + 8 > end)
            return -1;
        double d;
        uint64_t u = le(p, 8);
        memcpy(&d, &u, 8);
        if (!isfinite(d) || putf(o, "%.20g", d))
            return -1;
        if (mk->want && !(mk->obj = PyFloat_FromDouble(d)))
            return -1;
        return 8;
    }
    case MYSQL_TYPE_NEWDECIMAL: {
        Py_ssize_t used;
        if (decimal(o, p, end, m >> 8, m & 0xFF, &used))
            return -1;
        if (mk->want && !(mk->obj = PyObject_CallFunction(DecimalType, "s#", o->buf + start, o->len - start)))
            return -1;
        return used;
    }
    case MYSQL_TYPE_YEAR:
        if (p + 1 > end)
            return -1;
        if (putf(o, "%d", p[0] ? 1900 + p[0] : 0))
            return -1;
        if (mk->want && !(mk->obj = PyLong_FromLong(p[0] ? 1900 + p[0] : 0)))
            return -1;
        return 1;
    case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: {
        if (p + 3 > end)
            return -1;
        uint64_t v = le(p, 3);
        int y = (int)(v >> 9), mo = (int)((v >> 5) & 15), d = (int)(v & 31);
        if (putf(o, "'%04d:%02d:%02d'", y, mo, d))
            return -1;
        if (mk->want) {
            mk->obj = PyDate_FromDate(y, mo, d);
            if (!mk->obj) { /* a zero or invalid date: its text, as the Python path gives it */
                char tmp[32];
                if (hard_error())
                    return -1;
                snprintf(tmp, sizeof tmp, "%04d-%02d-%02d", y, mo, d);
                if (!(mk->obj = PyUnicode_FromString(tmp)))
                    return -1;
            }
        }
        return 3;
    }
    case MYSQL_TYPE_DATETIME2: {
        if (m > 6 || p + 5 > end)
            return -1;
        int64_t v = (int64_t)be(p, 5) - 0x8000000000LL;
        q = p + 5;
        long us;
        if (v < 0 || frac(&q, end, m, &us))
            return -1;
        int64_t ymd = v >> 17, hms = v & ((1 << 17) - 1);
        int64_t ym = ymd >> 5, day = ymd & 31;
        if (putf(o, "'%04d-%02d-%02d %02d:%02d:%02d", (int)(ym / 13), (int)(ym % 13), (int)day,
                 (int)(hms >> 12), (int)((hms >> 6) & 63), (int)(hms & 63)))
            return -1;
        if (m && frac_text(o, us, m))
            return -1;
        if (PUTS(o, "'"))
            return -1;
        if (mk->want) {
            mk->obj = PyDateTime_FromDateAndTime((int)(ym / 13), (int)(ym % 13), (int)day, (int)(hms >> 12),
                                                 (int)((hms >> 6) & 63), (int)(hms & 63), (int)us);
            if (!mk->obj) {
                if (hard_error())
                    return -1;
                mk->obj = PyUnicode_DecodeUTF8(o->buf + start + 1, o->len - start - 2, "strict");
                if (!mk->obj)
                    return -1;
            }
        }
        return q - p;
    }
    case MYSQL_TYPE_TIMESTAMP2: {
        if (m > 6 || p + 4 > end)
            return -1;
        uint64_t secs = be(p, 4);
        q = p + 4;
        long us;
        if (frac(&q, end, m, &us) || putf(o, "%llu", (unsigned long long)secs))
            return -1;
        if (m && frac_text(o, us, m))
            return -1;
        if (mk->want && !(mk->obj = PyObject_CallFunction(TimestampFn, "Kl", (unsigned long long)secs, us)))
            return -1;
        return q - p;
    }
    case MYSQL_TYPE_TIME2: {
        int64_t packed;
        if (m > 6)
            return -1;
        if (m >= 5) {
            if (p + 6 > end)
                return -1;
            packed = (int64_t)be(p, 6) - 0x800000000000LL;
            q = p + 6;
        } else {
            if (p + 3 > end)
                return -1;
            int64_t intpart = (int64_t)be(p, 3) - 0x800000;
            q = p + 3;
            int64_t fr = 0;
            if (m == 1 || m == 2) {
                if (q + 1 > end)
                    return -1;
                fr = q[0];
                q += 1;
                if (intpart < 0 && fr) {
                    intpart += 1;
                    fr -= 0x100;
                }
                fr *= 10000;
            } else if (m == 3 || m == 4) {
                if (q + 2 > end)
                    return -1;
                fr = (int64_t)be(q, 2);
                q += 2;
                if (intpart < 0 && fr) {
                    intpart += 1;
                    fr -= 0x10000;
                }
                fr *= 100;
            }
            packed = intpart * (1 << 24) + fr;
        }
        int neg = packed < 0;
        uint64_t a = neg ? (uint64_t)(-packed) : (uint64_t)packed;
        uint64_t ip = a >> 24, us = a % (1 << 24);
        if (putf(o, "'%s%02d:%02d:%02d", neg ? "-" : "", (int)((ip >> 12) % 1024), (int)((ip >> 6) % 64),
                 (int)(ip % 64)))
            return -1;
        if (m && frac_text(o, (long)us, m))
            return -1;
        if (PUTS(o, "'"))
            return -1;
        if (mk->want) {
            long long h = (long long)((ip >> 12) % 1024), mi = (long long)((ip >> 6) % 64), sec = (long long)(ip % 64);
            long long total = ((h * 60 + mi) * 60 + sec) * 1000000LL + (long long)us;
            if (neg)
                total = -total;
            long long day_us = 86400LL * 1000000LL;
            long long days = total >= 0 ? total / day_us : -((-total + day_us - 1) / day_us);
            long long rest = total - days * day_us;
            if (!(mk->obj = PyDelta_FromDSU((int)days, (int)(rest / 1000000LL), (int)(rest % 1000000LL))))
                return -1;
        }
        return q - p;
    }
    case MYSQL_TYPE_TIMESTAMP:
        if (p + 4 > end || putf(o, "%llu", (unsigned long long)le(p, 4)))
            return -1;
        if (mk->want && !(mk->obj = PyObject_CallFunction(TimestampFn, "Kl", (unsigned long long)le(p, 4), 0L)))
            return -1;
        return 4;
    case MYSQL_TYPE_DATETIME: {
        if (p + 8 > end)
            return -1;
        uint64_t v = le(p, 8);
        uint64_t d = v / 1000000, tm = v % 1000000;
        if (putf(o, "'%04llu-%02llu-%02llu %02llu:%02llu:%02llu'", (unsigned long long)(d / 10000),
                 (unsigned long long)(d / 100 % 100), (unsigned long long)(d % 100),
                 (unsigned long long)(tm / 10000), (unsigned long long)(tm / 100 % 100),
                 (unsigned long long)(tm % 100)))
            return -1;
        if (mk->want) {
            mk->obj = d / 10000 > 9999 ? NULL
                      : PyDateTime_FromDateAndTime((int)(d / 10000), (int)(d / 100 % 100), (int)(d % 100),
                                                   (int)(tm / 10000), (int)(tm / 100 % 100), (int)(tm % 100), 0);
            if (!mk->obj) {
                if (hard_error())
                    return -1;
                if (!(mk->obj = PyUnicode_DecodeUTF8(o->buf + start + 1, o->len - start - 2, "strict")))
                    return -1;
            }
        }
        return 8;
    }
    case MYSQL_TYPE_TIME: { /* a signed 3-byte hhmmss number */
        if (p + 3 > end)
            return -1;
        int64_t sv = (int64_t)le(p, 3);
        if (sv & 0x800000)
            sv -= 0x1000000;
        uint64_t v = (uint64_t)(sv < 0 ? -sv : sv);
        if (putf(o, "'%s%02llu:%02llu:%02llu'", sv < 0 ? "-" : "", (unsigned long long)(v / 10000),
                 (unsigned long long)(v / 100 % 100), (unsigned long long)(v % 100)))
            return -1;
        if (mk->want) {
            long long secs = (long long)(v / 10000) * 3600 + (long long)(v / 100 % 100) * 60 + (long long)(v % 100);
            if (sv < 0)
                secs = -secs;
            long long days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
            if (!(mk->obj = PyDelta_FromDSU((int)days, (int)(secs - days * 86400), 0)))
                return -1;
        }
        return 3;
    }
    case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_VAR_STRING: {
        const unsigned char *v;
        int lb = m < 256 ? 1 : 2;
        Py_ssize_t n = prefixed(p, end, lb, &v);
        if (n < 0 || quote(o, v, n, mk->esc))
            return -1;
        if (mk->want && !(mk->obj = PyBytes_FromStringAndSize((const char *)v, n)))
            return -1;
        return lb + n;
    }
    case MYSQL_TYPE_STRING: {
        int real = m >> 8;
        if (real == MYSQL_TYPE_ENUM || real == MYSQL_TYPE_SET) {
            int n = m & 0xFF;
            if (n < 1 || n > 8 || p + n > end)
                return -1;
            uint64_t v = le(p, n);
            /* a SET prints as mysqlbinlog prints it: the stored (little-endian) bytes in order */
            if (real == MYSQL_TYPE_ENUM ? putf(o, "%llu", (unsigned long long)v) : bits(o, be(p, n), n * 8))
                return -1;
            if (mk->want && !(mk->obj = PyLong_FromUnsignedLongLong(v)))
                return -1;
            return n;
        }
        int maxlen = (((m >> 4) & 0x300) ^ 0x300) + (m & 0xFF);
        int lb = maxlen < 256 ? 1 : 2;
        const unsigned char *v;
        Py_ssize_t n = prefixed(p, end, lb, &v);
        if (n < 0 || quote(o, v, n, mk->esc))
            return -1;
        if (mk->want) {
            Py_ssize_t size = mk->pad > n ? mk->pad : n; /* BINARY(n): zeros the binlog dropped */
            if (!(mk->obj = PyBytes_FromStringAndSize(NULL, size)))
                return -1;
            memcpy(PyBytes_AS_STRING(mk->obj), v, n);
            memset(PyBytes_AS_STRING(mk->obj) + n, 0, size - n);
        }
        return lb + n;
    }
    case MYSQL_TYPE_BLOB: case MYSQL_TYPE_TINY_BLOB: case MYSQL_TYPE_MEDIUM_BLOB: case MYSQL_TYPE_LONG_BLOB:
    case MYSQL_TYPE_GEOMETRY: {
        int lb = m ? m : 4;
        if (lb > 4)
            return -1;
        const unsigned char *v;
        Py_ssize_t n = prefixed(p, end, lb, &v);
        if (n < 0 || (t == MYSQL_TYPE_GEOMETRY && n < 4) || quote(o, v, n, mk->esc))
            return -1;
        if (mk->want) {
            mk->obj = t == MYSQL_TYPE_GEOMETRY ? PyObject_CallFunction(GeometryType, "ky#", (unsigned long)le(v, 4),
                                                               (const char *)v + 4, n - 4)
                                      : PyBytes_FromStringAndSize((const char *)v, n);
            if (!mk->obj)
                return -1;
        }
        return lb + n;
    }
    case MYSQL_TYPE_BIT: {
        int nbits = (m & 0xFF) * 8 + (m >> 8);
        int n = (nbits + 7) / 8;
        if (n > 8 || p + n > end)
            return -1;
        uint64_t v = be(p, n);
        if (nbits < 64 && v >> nbits)
            return -1; /* more bits set than the column has: damage, the Python path's to show */
        if (bits(o, v, nbits))
            return -1;
        if (mk->want && !(mk->obj = PyLong_FromUnsignedLongLong(v)))
            return -1;
        return n;
    }
    default:
        return -1; /* JSON, old DECIMAL, types unknown here: the Python decoder's business */
    }
}

typedef struct {
    const char *s;
    Py_ssize_t n;
} Note;

/* how many columns a columns bitmap marks present */
static Py_ssize_t count_present(const unsigned char *present, Py_ssize_t ncols) {
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < ncols; i++)
        n += (present[i / 8] >> (i % 8)) & 1;
    return n;
}

/* one image (null bitmap over the present columns, then their values) as `###   @N=value` lines;
   metas: 2 bytes little-endian per column; a NULL value's line ends in notes[null_at + i] (-vv: the
   type comment says is_null=1), another's in notes[i]. The bytes it used, or -1 (not for us) */
static Py_ssize_t image(Out *o, const unsigned char *types, const unsigned char *metas, const unsigned char *present,
                        Py_ssize_t ncols, const unsigned char *p, const unsigned char *end, const Note *notes,
                        int esc, Py_ssize_t null_at) {
    Py_ssize_t npresent = count_present(present, ncols);
    Py_ssize_t nb = (npresent + 7) / 8;
    if (p + nb > end)
        return -1;
    const unsigned char *nulls = p;
    const unsigned char *q = p + nb;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < ncols; i++) {
        if (!((present[i / 8] >> (i % 8)) & 1))
            continue;
        if (put(o, "###   @", 7) || put_u64(o, (uint64_t)i + 1) || put(o, "=", 1))
            return -1;
        int is_null = (nulls[k / 8] >> (k % 8)) & 1;
        if (is_null) {
            if (PUTS(o, "NULL"))
                return -1;
        } else {
            Made none = {NULL, 0, 0, esc};
            Py_ssize_t used = value(o, types[i], (int)le(metas + 2 * i, 2), q, end, &none);
            if (used < 0)
                return -1;
            q += used;
        }
        if (notes && put(o, notes[is_null ? null_at + i : i].s, notes[is_null ? null_at + i : i].n))
            return -1;
        if (PUTS(o, "\n"))
            return -1;
        k++;
    }
    return q - p;
}

/* The `### INSERT INTO ...` lines of one rows event (rowvalues.verbose_lines) from its uncompressed
   row images p..end: kind 0 insert, 1 update, 2 delete; the table's column types (a byte each) and
   metadata (2 bytes little-endian each), the column bitmaps (after: updates only), the quoted
   table name, a suffix per column (notes, or NULL) and the string quoting (esc). 0 with the rows
   counted into *nrows, or -1: not for us (o->len may have grown: the caller drops what is past
   its mark), including no memory. null_at: as image()'s (0: a NULL's line ends as any other's) */
static int rows_text_at(Out *o, int kind, const unsigned char *types, const unsigned char *metas, Py_ssize_t ncols,
                        const unsigned char *before, const unsigned char *after, const char *name, Py_ssize_t n_name,
                        const Note *notes, int esc, const unsigned char *p, const unsigned char *end,
                        long long *nrows, Py_ssize_t null_at) {
    long long n = 0;
    if (kind < 0 || kind > 2 || (kind == 1 && !after))
        return -1;
    while (p < end) {
        Py_ssize_t used;
        const unsigned char *row = p;
        if (kind == 1) {
            if (PUTS(o, "### UPDATE ") || put(o, name, n_name) || PUTS(o, "\n### WHERE\n") ||
                (used = image(o, types, metas, before, ncols, p, end, notes, esc, null_at)) < 0)
                return -1;
            p += used;
            if (PUTS(o, "### SET\n") || (used = image(o, types, metas, after, ncols, p, end, notes, esc, null_at)) < 0)
                return -1;
            p += used;
        } else {
            if ((kind == 2 ? PUTS(o, "### DELETE FROM ") : PUTS(o, "### INSERT INTO ")) || put(o, name, n_name) ||
                (kind == 2 ? PUTS(o, "\n### WHERE\n") : PUTS(o, "\n### SET\n")) ||
                (used = image(o, types, metas, before, ncols, p, end, notes, esc, null_at)) < 0)
                return -1;
            p += used;
        }
        if (p == row)
            return -1; /* a row of no bytes: never loop forever */
        n++;
    }
    *nrows = n;
    return 0;
}

static inline int rows_text(Out *o, int kind, const unsigned char *types, const unsigned char *metas, Py_ssize_t ncols,
                     const unsigned char *before, const unsigned char *after, const char *name, Py_ssize_t n_name,
                     const Note *notes, int esc, const unsigned char *p, const unsigned char *end,
                     long long *nrows) {
    return rows_text_at(o, kind, types, metas, ncols, before, after, name, n_name, notes, esc, p, end, nrows, 0);
}

#endif
