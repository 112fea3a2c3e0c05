/*
 * binlogkit._rowtext: the `decode -v` text of a rows event's images, in C.
 *
 * An optional accelerator for binlogkit/rowvalues/images.py, which stays the reference: this code
 * prints exactly what rowvalues.verbose_lines prints (tests compare the two on every fixture
 * event and on random images), for the column types it knows. Anything else -- a type it does
 * not print (JSON), an image that runs past its end, a value that is not finite -- makes it
 * return None, and the caller uses the Python decoder, which gives the text or the typed error.
 * Every read is bounds-checked against the image's end.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include "_constants.h"
#include "_out.h"

#include "_rowimage.h"

/* for rows(): the tuple subclass a value is made as (set once by configure()) */
static PyObject *ValueType;

/* n little-endian 16-bit numbers (column metadata, pad lengths) as an array; NULL: no memory */
static uint16_t *u16s(const Py_buffer *b, Py_ssize_t n) {
    uint16_t *out = PyMem_Malloc(sizeof(uint16_t) * (n ? n : 1));
    if (!out) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = (uint16_t)le((const unsigned char *)b->buf + 2 * i, 2);
    return out;
}


static PyObject *verbose(PyObject *self, PyObject *args) {
    Py_buffer data, types, metas, before, after, name;
    int kind; /* 0 insert, 1 update, 2 delete */
    PyObject *note_objs = Py_None;
    int esc = 0;
    if (!PyArg_ParseTuple(args, "y*iy*y*y*y*y*|Op", &data, &kind, &types, &metas, &before, &after, &name, &note_objs,
                          &esc))
        return NULL;
    PyObject *result = NULL;
    Out o = {NULL, 0, 0};
    Py_ssize_t ncols = types.len;
    Note *notes = NULL;
    long long nrows;
    int ok = metas.len == 2 * ncols && before.len >= (ncols + 7) / 8 &&
             (kind != 1 || after.len >= (ncols + 7) / 8) && kind >= 0 && kind <= 2;
    if (ok && grow(&o, data.len + data.len / 2 + 4096)) { /* text runs ~1.3x the image: one allocation */
        PyErr_NoMemory();
        goto done;
    }
    if (ok && note_objs != Py_None) { /* a bytes suffix per column (the column's name) */
        ok = PyTuple_Check(note_objs) && PyTuple_GET_SIZE(note_objs) == ncols;
        if (ok && !(notes = PyMem_Malloc(sizeof(Note) * (ncols ? ncols : 1)))) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; ok && i < ncols; i++) {
            PyObject *item = PyTuple_GET_ITEM(note_objs, i);
            ok = PyBytes_Check(item);
            if (ok) {
                notes[i].s = PyBytes_AS_STRING(item);
                notes[i].n = PyBytes_GET_SIZE(item);
            }
        }
    }
    ok = ok && !rows_text(&o, kind, types.buf, metas.buf, ncols, before.buf, kind == 1 ? after.buf : NULL, name.buf,
                          name.len, notes, esc, data.buf, (const unsigned char *)data.buf + data.len, &nrows);
    if (ok)
        result = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
    else if (!PyErr_Occurred()) {
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    PyMem_Free(notes);
    PyMem_Free(o.buf);
    PyBuffer_Release(&data);
    PyBuffer_Release(&types);
    PyBuffer_Release(&metas);
    PyBuffer_Release(&before);
    PyBuffer_Release(&after);
    PyBuffer_Release(&name);
    return result;
}

/* one image as [(index, Value | None), ...]; NULL: not for us (no exception) or an error */
static PyObject *values_image(Out *scratch, const unsigned char *types, const uint16_t *metas, const uint16_t *pads,
                              const unsigned char *present, Py_ssize_t ncols, const unsigned char **pp,
                              const unsigned char *end, int esc) {
    const unsigned char *p = *pp;
    Py_ssize_t npresent = count_present(present, ncols);
    Py_ssize_t nb = (npresent + 7) / 8;
    if (p + nb > end)
        return NULL;
    const unsigned char *nulls = p;
    const unsigned char *q = p + nb;
    PyObject *list = PyList_New(npresent);
    if (!list)
        return NULL;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < ncols; i++) {
        if (!((present[i / 8] >> (i % 8)) & 1))
            continue;
        PyObject *val;
        if ((nulls[k / 8] >> (k % 8)) & 1) {
            Py_INCREF(Py_None);
            val = Py_None;
        } else {
            Made mk = {NULL, 1, pads[i], esc};
            scratch->len = 0;
            Py_ssize_t used = value(scratch, types[i], metas[i], q, end, &mk);
            if (used < 0) {
                Py_XDECREF(mk.obj);
                Py_DECREF(list);
                return NULL;
            }
            q += used;
            PyObject *text = PyUnicode_DecodeUTF8(scratch->buf ? scratch->buf : "", scratch->len, "surrogateescape");
            if (!text) {
                Py_DECREF(mk.obj);
                Py_DECREF(list);
                return NULL;
            }
            val = ((PyTypeObject *)ValueType)->tp_alloc((PyTypeObject *)ValueType, 2);
            if (!val) {
                Py_DECREF(mk.obj);
                Py_DECREF(text);
                Py_DECREF(list);
                return NULL;
            }
            PyTuple_SET_ITEM(val, 0, mk.obj);
            PyTuple_SET_ITEM(val, 1, text);
        }
        PyObject *pair = Py_BuildValue("(nN)", i, val);
        if (!pair) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, pair);
        k++;
    }
    *pp = q;
    return list;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *v, *d, *g, *ts;
    if (!PyArg_ParseTuple(args, "O!OOO", &PyType_Type, &v, &d, &g, &ts))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)v, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "Value must be a tuple subclass");
        return NULL;
    }
    Py_XSETREF(ValueType, Py_NewRef(v));
    Py_XSETREF(DecimalType, Py_NewRef(d));
    Py_XSETREF(GeometryType, Py_NewRef(g));
    Py_XSETREF(TimestampFn, Py_NewRef(ts));
    Py_RETURN_NONE;
}

static PyObject *rows(PyObject *self, PyObject *args) {
    Py_buffer data, types, metas, before, after, pads_buf;
    int kind, esc = 0;
    if (!ValueType) {
        PyErr_SetString(PyExc_RuntimeError, "_rowtext.configure() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*iy*y*y*y*y*|p", &data, &kind, &types, &metas, &before, &after, &pads_buf, &esc))
        return NULL;
    PyObject *result = NULL, *out = NULL;
    Out scratch = {NULL, 0, 0};
    Py_ssize_t ncols = types.len;
    uint16_t *m = NULL;
    uint16_t *pads = NULL;
    int ok = metas.len == 2 * ncols && pads_buf.len == 2 * ncols && before.len >= (ncols + 7) / 8 &&
             (kind != 1 || after.len >= (ncols + 7) / 8) && kind >= 0 && kind <= 2;
    const unsigned char *p = data.buf, *end = p + data.len;
    if (ok && (!(m = u16s(&metas, ncols)) || !(pads = u16s(&pads_buf, ncols)) || !(out = PyList_New(0))))
        goto done;
    while (ok && p < end) {
        const unsigned char *row = p;
        PyObject *b = NULL, *a = NULL;
        if (kind == 1) {
            b = values_image(&scratch, types.buf, m, pads, before.buf, ncols, &p, end, esc);
            a = b ? values_image(&scratch, types.buf, m, pads, after.buf, ncols, &p, end, esc) : NULL;
            ok = b && a;
        } else {
            PyObject *img = values_image(&scratch, types.buf, m, pads, before.buf, ncols, &p, end, esc);
            ok = img != NULL;
            if (kind == 2)
                b = img;
            else
                a = img;
        }
        if (ok && p == row)
            ok = 0; /* a row of no bytes: never loop forever */
        PyObject *d = ok ? PyDict_New() : NULL;
        if (d && (PyDict_SetItemString(d, "before", b ? b : Py_None) || PyDict_SetItemString(d, "after", a ? a : Py_None) ||
                  PyList_Append(out, d))) {
            Py_CLEAR(d);
        }
        Py_XDECREF(b);
        Py_XDECREF(a);
        if (ok && !d)
            goto done; /* a real error (memory) */
        Py_XDECREF(d);
    }
    if (ok) {
        result = out;
        out = NULL;
    } else if (!hard_error()) {
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    Py_XDECREF(out);
    PyMem_Free(m);
    PyMem_Free(pads);
    PyMem_Free(scratch.buf);
    PyBuffer_Release(&data);
    PyBuffer_Release(&types);
    PyBuffer_Release(&metas);
    PyBuffer_Release(&before);
    PyBuffer_Release(&after);
    PyBuffer_Release(&pads_buf);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Value, Decimal, Geometry, timestamp) -> None: the types rows() makes values of."},
    {"rows", rows, METH_VARARGS,
     "rows(rows, kind, types, metas, before_bits, after_bits, pads, escape=False) -> list | None\n\n"
     "The rows of one rows event as rowvalues.decode_rows gives them ([{'before': [(index, Value |\n"
     "None), ...] | None, 'after': ...}]); pads: 2 bytes per column, the length BINARY(n) values are\n"
     "padded to (0: none); escape: strings quoted as MySQL 8.0+'s mysqlbinlog does (' and \\ escaped,\n"
     "\\n and its kin by name); None when the Python decoder must do it."},
    {"verbose", verbose, METH_VARARGS,
     "verbose(rows, kind, types, metas, before_bits, after_bits, name, notes=None, escape=False) -> bytes | None\n\n"
     "The `### INSERT INTO ...` lines of one rows event (kind 0 insert, 1 update, 2 delete) from\n"
     "its uncompressed row images, the table's column types (a byte each), their metadata (2 bytes\n"
     "little-endian each) and the column bitmaps; notes, a bytes suffix per column, ends each value\n"
     "line (the column's name); escape as for rows(); None when the Python decoder must do it."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowtext",
                                    "C accelerator for rowvalues.verbose_lines (optional).", -1, methods};

PyMODINIT_FUNC PyInit__rowtext(void) {
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI)
        return NULL;
    return PyModule_Create(&module);
}
