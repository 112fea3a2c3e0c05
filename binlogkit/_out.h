/*
 * binlogkit/_out.h: the output buffer, byte reader, event header and CRC call shared by the C accelerators
 * (_fastdecode.c, _rowtext.c, _pullscan.c). Header-only (static inline): each extension module
 * gets its own copy, and none links against another. Define OUT_FIRST_CAP before including it to
 * choose the first allocation (a decode window wants more than one row image).
 */
#ifndef BINLOGKIT_OUT_H
#define BINLOGKIT_OUT_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#ifndef OUT_FIRST_CAP
#define OUT_FIRST_CAP 4096
#endif

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

/* room for `need` more bytes (capacity doubled): -1 when memory is out (PyMem_Realloc) */
static inline int grow(Out *o, Py_ssize_t need) {
    if (o->len + need <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : OUT_FIRST_CAP;
    while (cap < o->len + need)
        cap *= 2;
    char *b = PyMem_Realloc(o->buf, cap);
    if (!b)
        return -1;
    o->buf = b;
    o->cap = cap;
    return 0;
}

static inline int put(Out *o, const char *s, Py_ssize_t n) {
    if (grow(o, n))
        return -1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

/* decimal digits of v, without printf (the hot path: integers, positions, column numbers) */
static inline int put_u64(Out *o, uint64_t v) {
    char tmp[24];
    int i = 24;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return put(o, tmp + i, 24 - i);
}

/* an unsigned little-endian integer of n (<= 8) bytes */
static inline uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* the 19-byte common event header (binlogkit/codecs/header.py), read by the C loops' window walks
   in one place; the caller has checked that the 19 bytes are there */
typedef struct {
    uint32_t ts, sid, size, log_pos;
    int code;
    unsigned flags;
} EventHeader;

static inline EventHeader event_header(const unsigned char *h) {
    EventHeader e = {(uint32_t)le(h, 4), (uint32_t)le(h + 5, 4), (uint32_t)le(h + 9, 4), (uint32_t)le(h + 13, 4),
                     h[4], (unsigned)le(h + 17, 2)};
    return e;
}

/* CRC32 of p[0:n] through the Python callable given (ISA-L's or zlib's crc32), without a
   copy: 0 with *out set, -1 with the exception set */
static inline int crc_call(PyObject *crc, const unsigned char *p, Py_ssize_t n, uint32_t *out) {
    PyObject *mv = PyMemoryView_FromMemory((char *)p, n, PyBUF_READ);
    if (!mv)
        return -1;
    PyObject *v = PyObject_CallOneArg(crc, mv);
    Py_DECREF(mv);
    if (!v)
        return -1;
    unsigned long actual = PyLong_AsUnsignedLong(v);
    Py_DECREF(v);
    if (actual == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    *out = (uint32_t)actual;
    return 0;
}

#endif
