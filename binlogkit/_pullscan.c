/*
 * binlogkit._pullscan: the per-event work of `binlogkit pull` on the common events, in C.
 *
 * An optional accelerator for binlogkit/pull/receiver.py, which stays the reference: run() takes
 * the dump stream's bytes as the framer holds them and handles the run of events that need no
 * decision -- one packet each, in sequence, not artificial, not a Format_description or Rotate,
 * CRC32 good (checked through the crc callable it is given -- zlib's or ISA-L's -- or, when it is
 * given None, by ISA-L's crc32_gzip_refl called directly: bind_crc), ending where their header
 * says, and whose transaction boundary the rules below settle -- moving each event (without
 * its packet header and semisync prefix) down over the headers, in the framer's own buffer, so
 * that the events taken are one run of bytes from `pos` on that the receiver writes from there
 * (no new object, no copy but that move). At the first packet that is
 * anything else it stops, and the receiver's Python path takes that packet: it decides every
 * error and every irregular case (tests feed the same streams, damaged ones too, through both).
 *
 * The transaction boundary rules are those of binlogkit/boundary.py (its step(), the reference;
 * the state bits below are its OPEN_GROUP, STANDALONE, BY_GTID, OPEN; tests/test_boundary.py
 * holds the two equal), restricted to what they settle without a Python call: a MariaDB GTID,
 * MySQL GTID / anonymous / tagged GTID, Xid, XA_PREPARE, a Transaction_payload, a plain Query
 * (post-header length 13) whose text is exactly BEGIN or COMMIT, and any other event inside an
 * open transaction. Any other Query, any event after a standalone GTID and any event that would
 * open a transaction without a GTID stops the run. Every read is bounds-checked against the
 * packet.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "_constants.h"
#include "_out.h"

#define LEN_PACKET_HEADER 4
#define MAX_PAYLOAD 0xFFFFFF
#define LEN_HEADER LEN_COMMON_HEADER
#define SEMISYNC_MAGIC 0xEF
#define SEMISYNC_NEED_ACK 0x01
#define MAX_EVENT_SIZE (1LL << 30)
#define MAX_GNO ((1ULL << 63) - 2)
#define OPEN_GROUP 1
#define STANDALONE 2
#define BY_GTID 4
#define OPEN 8

/* the text of a plain Query is exactly `word` (5 or 6 bytes); -1: not settled here */
static int query_is(const unsigned char *body, Py_ssize_t n, int phl, const char *word, Py_ssize_t len) {
    if (phl != 13 || n < 13)
        return -1;
    Py_ssize_t len_db = body[8], len_sv = (Py_ssize_t)le(body + 11, 2);
    Py_ssize_t p = 13 + len_sv + len_db;
    if (p >= n || body[p] != 0)
        return -1;
    return n - (p + 1) == len && memcmp(body + p + 1, word, (size_t)len) == 0;
}

/* ISA-L's CRC32 (crc32_gzip_refl: zlib's polynomial, init and final xor), found in the isal_zlib
 * extension the process has loaded (bind_crc): the C loop then checks each event without a
 * Python call (a memoryview and a call per event were ~10 ms of a 210 MB pull) */
typedef uint32_t (*crc_fn)(uint32_t, const unsigned char *, uint64_t);
static crc_fn native_crc = NULL;

static PyObject *bind_crc(PyObject *self, PyObject *args) {
    (void)self;
    const char *path;
    Py_buffer probe;
    unsigned long expect;
    if (!PyArg_ParseTuple(args, "sy*k", &path, &probe, &expect))
        return NULL;
    native_crc = NULL;
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD); /* only a library already loaded; kept open */
    crc_fn f = NULL;
    if (lib) {
        void *sym = dlsym(lib, "crc32_gzip_refl");
        memcpy(&f, &sym, sizeof f);
    }
    /* used only if it gives zlib's answer on the probe */
    int ok = f != NULL && f(0, probe.buf, (uint64_t)probe.len) == (uint32_t)expect;
    PyBuffer_Release(&probe);
    if (ok)
        native_crc = f;
    return PyBool_FromLong(ok);
}

static PyObject *run(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    Py_ssize_t pos, end;
    int seq, semisync, crc_on, state, phl;
    long long at;
    PyObject *crc;
    if (!PyArg_ParseTuple(args, "w*nniiiLiiO", &buf, &pos, &end, &seq, &semisync, &crc_on, &at, &state, &phl, &crc))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t first = pos, taken = 0;
    long long events = 0, transactions = 0;
    unsigned long last_ts = 0;
    unsigned char *base = buf.buf;
    if (end < 0 || end > buf.len || pos < 0 || pos > end || seq < 0 || seq > 255) {
        PyErr_SetString(PyExc_ValueError, "run: bad arguments");
        goto done;
    }
    while (end - pos >= LEN_PACKET_HEADER) {
        const unsigned char *pk = base + pos;
        Py_ssize_t n = (Py_ssize_t)le(pk, 3);
        if (end - pos < LEN_PACKET_HEADER + n || pk[3] != seq || n == MAX_PAYLOAD || n < 20 || pk[4] != 0)
            break;
        Py_ssize_t skip = 1;
        if (semisync) {
            if (n < 22 || pk[5] != SEMISYNC_MAGIC || pk[6] & SEMISYNC_NEED_ACK)
                break;
            skip = 3;
        }
        const unsigned char *ev = pk + LEN_PACKET_HEADER + skip;
        Py_ssize_t size = n - skip;
        if (size < LEN_HEADER)
            break;
        uint32_t ts = (uint32_t)le(ev, 4), log_pos = (uint32_t)le(ev + 13, 4);
        int code = ev[4];
        unsigned flags = (unsigned)le(ev + 17, 2);
        if ((Py_ssize_t)le(ev + 9, 4) != size || flags & LOG_EVENT_ARTIFICIAL_F || code == HEARTBEAT_LOG_EVENT ||
            code == HEARTBEAT_LOG_EVENT_V2 || code == FORMAT_DESCRIPTION_EVENT || code == ROTATE_EVENT ||
            code == START_ENCRYPTION_EVENT)   /* the file's own, or re-sent after a mid-file start: Python's */
            break;
        /* log_pos 0: an event inside a MariaDB 11.8 transaction (binlog_legacy_event_pos=OFF) */
        if (log_pos != 0 && (uint32_t)((unsigned long long)(at + size) & 0xFFFFFFFFULL) != log_pos)
            break;
        Py_ssize_t len_crc = crc_on ? 4 : 0;
        if (crc_on) {
            if (size < LEN_HEADER + 4)
                break;
            uint32_t actual;
            if (crc == Py_None) {
                if (native_crc == NULL) {
                    PyErr_SetString(PyExc_ValueError, "run: crc None but no CRC32 bound (bind_crc)");
                    goto done;
                }
                actual = native_crc(0, ev, (uint64_t)(size - 4));
            } else if (crc_call(crc, ev, size - 4, &actual))
                goto done;
            if (actual != (uint32_t)le(ev + size - 4, 4))
                break;
        }
        int ends = 0, next = state;
        const unsigned char *body = ev + LEN_HEADER;
        Py_ssize_t nbody = size - LEN_HEADER - len_crc;
        /* an event other than a GTID with no transaction open opens one (boundary.step) */
        int open = state & OPEN ? state : OPEN;
        switch (code) {
        case GTID_EVENT: /* MariaDB GTID: flags2 bit 0 is FL_STANDALONE; without it the GTID opens the group */
            next = OPEN | BY_GTID | ((nbody > 12 && body[12] & 1) ? STANDALONE : OPEN_GROUP);
            break;
        case GTID_LOG_EVENT: /* a MySQL GTID body shorter than 25 bytes names no GTID */
            next = OPEN | (nbody >= 25 ? BY_GTID : 0);
            break;
        case ANONYMOUS_GTID_LOG_EVENT:
        case GTID_TAGGED_LOG_EVENT:
            next = OPEN | BY_GTID;
            break;
        case XID_EVENT:
        case XA_PREPARE_LOG_EVENT:
            next = 0;
            ends = 1;
            break;
        case QUERY_EVENT: {
            int begin = query_is(body, nbody, phl, "BEGIN", 5);
            int commit = begin == 1 ? 0 : query_is(body, nbody, phl, "COMMIT", 6);
            if (begin == 1)
                next = open | OPEN_GROUP;
            else if (commit == 1) {
                next = 0;
                ends = 1;
            } else
                goto stop;
            break;
        }
        case QUERY_COMPRESSED_EVENT:
            goto stop;
        case TRANSACTION_PAYLOAD_EVENT:
            ends = !(open & OPEN_GROUP);
            next = ends ? 0 : open;
            break;
        default:
            /* after a standalone GTID, and with no transaction open (an event outside
               transactions or one that opens a legacy one): the Python path decides */
            if (state & STANDALONE || !(state & OPEN))
                goto stop;
        }
        taken += size;
        state = next;
        at += size;
        pos += LEN_PACKET_HEADER + n;
        seq = (seq + 1) & 0xFF;
        events++;
        transactions += ends;
        if (ts)
            last_ts = ts;
    }
stop:
    /* the events taken, moved down over their packet headers into buf[first:first + taken]: the
       packets from `first` to `pos` were all checked above, so only their framing is walked
       again; the write end stays before the next packet's header (every packet has 5 or more
       bytes of header and prefix), which is read before anything is written over it */
    {
        unsigned char *w = base + first;
        Py_ssize_t skip = semisync ? 3 : 1;
        for (Py_ssize_t p = first; p < pos;) {
            Py_ssize_t n = (Py_ssize_t)le(base + p, 3);
            memmove(w, base + p + LEN_PACKET_HEADER + skip, (size_t)(n - skip));
            w += n - skip;
            p += LEN_PACKET_HEADER + n;
        }
    }
    result = Py_BuildValue("(niLnLLki)", pos, seq, at, taken, events, transactions, last_ts, state);
done:
    PyBuffer_Release(&buf);
    return result;
}


/*
 * summary(): the per-file pass of `audit` (binlogkit/audit/summary.py, the reference) on the
 * events it settles without a Python call, in a binlog (not a relay log) after its
 * Format_description: it counts events, checksummed events and timestamps, and applies
 * boundary.py's step to plain events inside an open transaction, Xid, and a plain BEGIN /
 * COMMIT Query; a MariaDB GTID of the one stream the caller names (domain, server id) whose
 * seq_no is one above the domain's last, or a MySQL GTID of the one uuid it names whose number
 * is one above the last of that uuid, opens a transaction, and a transaction of that stream
 * closed complete extends the caller's run of complete seq_nos when it is the next one. Anything
 * else -- a bad CRC, an unknown type, a break of the end_log_pos chain, any other event type,
 * any other GTID, no transaction open, a standalone GTID's statement -- stops it before that
 * event, which the Python path reads. Every read is bounds-checked against the window.
 */
#define S_MORE 0
#define S_PYTHON 1
/* the transaction summary() follows: the caller's (have_cur, cur_fast, cur_seq, cur_at, cur_src),
   the last number of its stream, and the transactions it opened */
typedef struct {
    int have_cur, cur_fast;
    unsigned long long cur_seq;
    long long cur_at, cur_src, last, transactions, opened;
} Fast;

/* a GTID of the caller's stream, number `seq` (the next one), opens a transaction the loop follows */
static inline void open_fast(Fast *t, unsigned long long seq, long long at, const EventHeader *e) {
    t->last = (long long)seq;
    t->have_cur = 1;
    t->cur_fast = 1;
    t->cur_seq = seq;
    t->cur_at = at;
    t->cur_src = e->log_pos ? (long long)e->log_pos - (long long)e->size : -1;
    t->transactions++;
    t->opened++;
}

static PyObject *summary(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf, known, uuid;
    Py_ssize_t rel, filled;
    long long at, domain, server, ce;
    int crc_on, state, phl;
    Fast t = {0};
    PyObject *crc;
    if (!PyArg_ParseTuple(args, "y*nnLiiiy*iiKLLLLy*LLO", &buf, &rel, &filled, &at, &crc_on, &state, &phl, &known,
                          &t.have_cur, &t.cur_fast, &t.cur_seq, &t.cur_at, &t.cur_src, &domain, &server, &uuid,
                          &t.last, &ce, &crc))
        return NULL;
    PyObject *result = NULL;
    long long events = 0, checksummed = 0, first_ts = -1, last_ts = -1;
    int status = S_MORE;
    const unsigned char *base = buf.buf;
    if (known.len != 256 || rel < 0 || filled > buf.len || rel > filled || (uuid.len != 0 && uuid.len != 16)) {
        PyErr_SetString(PyExc_ValueError, "summary: bad arguments");
        goto done;
    }
    for (;;) {
        Py_ssize_t avail = filled - rel;
        if (avail < LEN_HEADER)
            break;
        const unsigned char *h = base + rel;
        const EventHeader e = event_header(h);
        Py_ssize_t len_crc = crc_on ? 4 : 0;
        if (e.size < LEN_HEADER + len_crc || e.size > MAX_EVENT_SIZE) {
            status = S_PYTHON;
            break;
        }
        if (avail < (Py_ssize_t)e.size)
            break;
        if (!((const unsigned char *)known.buf)[e.code] && !(e.flags & LOG_EVENT_IGNORABLE_F)) {
            status = S_PYTHON;
            break;
        }
        unsigned long long end = (unsigned long long)at + e.size;
        if (e.log_pos && e.log_pos != (uint32_t)(end & 0xFFFFFFFFULL) && !(e.flags & LOG_EVENT_ARTIFICIAL_F)) {
            status = S_PYTHON; /* a break of the end_log_pos chain: the Python path notes it */
            break;
        }
        if (crc_on) {
            uint32_t actual;
            if (crc_call(crc, h, e.size - 4, &actual))
                goto done;
            if (actual != (uint32_t)le(h + e.size - 4, 4)) {
                status = S_PYTHON;
                break;
            }
        }
        const unsigned char *body = h + LEN_HEADER;
        Py_ssize_t nbody = e.size - LEN_HEADER - len_crc;
        int next = state, close = 0;
        switch (e.code) {
        case GTID_EVENT: { /* MariaDB GTID */
            if (t.have_cur || nbody < 13 || domain < 0)
                goto stop;
            unsigned long long seq = le(body, 8);
            uint32_t d = (uint32_t)le(body + 8, 4);
            /* a seq_no past 2^63 - 2 does not fit the signed run ends: the Python path takes it */
            if ((long long)d != domain || (long long)e.sid != server || seq != (unsigned long long)t.last + 1 ||
                seq > MAX_GNO)
                goto stop;
            open_fast(&t, seq, at, &e);
            next = OPEN | BY_GTID | ((body[12] & 1) ? STANDALONE : OPEN_GROUP);
            break;
        }
        case XID_EVENT: /* Xid */
            close = 1;
            break;
        case QUERY_EVENT: {
            int begin = query_is(body, nbody, phl, "BEGIN", 5);
            int commit = begin == 1 ? 0 : query_is(body, nbody, phl, "COMMIT", 6);
            if (begin == 1 && t.have_cur)
                next = (state & OPEN ? state : OPEN) | OPEN_GROUP;
            else if (commit == 1)
                close = 1;
            else
                goto stop;
            break;
        }
        case GTID_LOG_EVENT: { /* MySQL GTID (untagged) of the stream `uuid`, the next number */
            if (t.have_cur || nbody < 25 || uuid.len != 16 || memcmp(body + 1, uuid.buf, 16) != 0)
                goto stop;
            unsigned long long gno = le(body + 17, 8);
            if (t.last < 0 || gno != (unsigned long long)t.last + 1 || gno > MAX_GNO)
                goto stop;
            open_fast(&t, gno, at, &e);
            next = OPEN | BY_GTID;
            break;
        }
        /* what the Python path reads: Format_description, Rotate, events outside t.transactions,
           the other GTIDs, XA_PREPARE, Transaction_payload, compressed Query */
        case FORMAT_DESCRIPTION_EVENT: case ROTATE_EVENT: case STOP_EVENT: case GTID_LIST_EVENT:
        case BINLOG_CHECKPOINT_EVENT: case PREVIOUS_GTIDS_LOG_EVENT: case HEARTBEAT_LOG_EVENT:
        case HEARTBEAT_LOG_EVENT_V2: case START_ENCRYPTION_EVENT: case INCIDENT_EVENT: case IGNORABLE_LOG_EVENT:
        case ANONYMOUS_GTID_LOG_EVENT: case GTID_TAGGED_LOG_EVENT: case XA_PREPARE_LOG_EVENT: case TRANSACTION_PAYLOAD_EVENT: case QUERY_COMPRESSED_EVENT:
            goto stop;
        default:
            if (!t.have_cur || state & STANDALONE)
                goto stop;
        }
        if (close) {
            if (!t.have_cur || !t.cur_fast || ce < 0 || t.cur_seq != (unsigned long long)ce + 1)
                goto stop;
            ce = (long long)t.cur_seq;
            t.have_cur = 0;
            t.cur_fast = 0;
            next = 0;
        }
        state = next;
        events++;
        checksummed += crc_on;
        if (e.ts) {
            if (first_ts < 0)
                first_ts = e.ts;
            last_ts = e.ts;
        }
        rel += e.size;
        at += e.size;
    }
    goto out;
stop:
    status = S_PYTHON;
out:
    result = Py_BuildValue("(inLLLLLiiiKLLLLLL)", status, rel, at, events, checksummed, first_ts, last_ts, state,
                           t.have_cur, t.cur_fast, t.cur_seq, t.cur_at, t.cur_src, t.last, ce, t.transactions,
                           t.opened);
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&known);
    PyBuffer_Release(&uuid);
    return result;
}

static PyMethodDef methods[] = {
    {"bind_crc", bind_crc, METH_VARARGS,
     "bind_crc(path, probe, expect) -> bool\n\n"
     "Find crc32_gzip_refl in the loaded library `path` (isal.isal_zlib's file) for run() called\n"
     "with crc None; kept only if its CRC32 of `probe` is `expect` (zlib's)."},
    {"run", run, METH_VARARGS,
     "run(buf, pos, end, seq, semisync, crc_on, at, state, query_phl, crc) ->\n"
     "    (pos, seq, at, taken, events, transactions, last_timestamp, state)\n\n"
     "Take the dump packets of buf[pos:end] that need no decision (see the module's comment):\n"
     "their events moved to buf[old pos:old pos + taken], the framer's new position and sequence, the copy's new\n"
     "length `at`, and the boundary state (boundary.py's bits: 1 open group, 2 after a standalone\n"
     "GTID, 4 opened by a GTID, 8 open). It stops\n"
     "at the first packet it does not settle, which the Python path then reads."},
    {"summary", summary, METH_VARARGS,
     "summary(buf, rel, filled, at, crc_on, state, query_phl, known, have_cur, cur_fast, cur_seq, cur_at,\n"
     "        cur_src, domain, server_id, uuid, last, complete_end, crc) ->\n"
     "    (status, rel, at, events, checksummed, first_ts, last_ts, state, have_cur, cur_fast, cur_seq,\n"
     "     cur_at, cur_src, last, complete_end, transactions, opened)\n\n"
     "audit's per-file pass over buf[rel:filled] (the file from offset `at`) until an event it does\n"
     "not settle (status 1: the Python path reads it) or the window ends (0). See the comment above it."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pullscan",
                                    "C accelerator for binlogkit pull's receiver (optional).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pullscan(void) { return PyModule_Create(&module); }
