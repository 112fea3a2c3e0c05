/*
 * binlogkit._fastdecode: the `decode` / `decode --json` / `verify` loop over a window of a plain
 * binlog, in C.
 *
 * An optional accelerator for the Python path (scan.walk_events framing, events.decode, the
 * render.py text and the cli's JSON), which stays the reference: binlogkit/reading/fastdecode.py drives
 * this loop and hands every event it does not take to the Python path. walk() frames the events
 * of buf[rel:filled], checks their CRC32 (through the crc callable it is given: ISA-L's or
 * zlib's), and renders the hot event kinds (Table_map, Write/Update/Delete_rows v1/v2, Xid,
 * MariaDB's GTID and Annotate_rows) the way the Python path prints them. It never decides an
 * error: anything irregular -- a size out of range, a torn event, a checksum mismatch, a body
 * its fast layout rules do not cover, a name that is not plain ASCII -- stops it at that event
 * and the caller lets the Python path read it (tests compare the two on every fixture and
 * corpus file and on damaged input). Every read is bounds-checked against the event's end.
 *
 * Replayable text (decode's default: decoding/replay.py's Replay, the reference): Replayer.walk
 * prints MariaDB's GTID, Annotate_rows, Table_map, Write/Update/Delete_rows v1/v2 and Xid as
 * Replay.feed prints them -- the session lines printed only when they change, `# at`, header
 * comments in local time or UTC, a statement's row events joined into one BINLOG block, rows
 * counted -- from the state Replay lends it (Replay.lend / Replay.settle); every other event,
 * and any of those it finds anything unusual about, goes to Replay.
 *
 * The layouts read here are those of binlogkit/codecs (Construct, the single statement of each
 * layout) as binlogkit/codecs/fast.py reads them; a body those rules do not cover goes back.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>

#include "_constants.h"

enum { MORE = 0, PYTHON = 1, HANDOVER = 2, ROWS = 3, TABLEMAP = 4, FULL = 5 };
enum {
    O_VERIFY = 1, O_TEXT = 2, O_JSON = 4, O_VERBOSE = 8, O_FIRST_PY = 16, O_CRC_ON = 32, O_SHOW_CRC = 64,
    O_COUNT = 128, O_JROWS = 1 << 17 /* with O_JSON: rows events' values too (decode --json -v) */
};
#define LEN_HEADER LEN_COMMON_HEADER
#define MAX_EVENT_SIZE ((1LL << 30) + (1LL << 16))
#define OUT_LIMIT (1 << 20)
#define OUT_FIRST_CAP (1 << 16)
#include "_out.h"

#define PUTS(o, s) put((o), (s), (Py_ssize_t)(sizeof(s) - 1))
#include "_rowimage.h" /* the `###` rows text, shared with _rowtext.c */

static const char HEX[] = "0123456789abcdef";

static int put_hex(Out *o, const unsigned char *p, Py_ssize_t n) {
    if (grow(o, 2 * n))
        return -1;
    char *w = o->buf + o->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        *w++ = HEX[p[i] >> 4];
        *w++ = HEX[p[i] & 15];
    }
    o->len += 2 * n;
    return 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* two base64 characters per 12 bits: B64PAIR[v] = B64[v >> 6], B64[v & 63] (made once, b64_init) */
static char B64PAIR[4096][2];

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define B64_SIMD 1
static int b64_ssse3; /* the CPU has SSSE3 (b64_init) */

/* 12 bytes -> 16 base64 characters with SSSE3 (W. Mula's method, as in aklomp/base64's SSSE3
   codec): each 3-byte group spread over 4 bytes, its four 6-bit fields shifted into place,
   then each field mapped to its character by a 16-entry offset table */
__attribute__((target("ssse3"))) static void b64_line(char *w, const unsigned char *q) {
    const __m128i shuf = _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
    const __m128i lut = _mm_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
    for (int k = 0; k < 4; k++, q += 12, w += 16) { /* 48 of the line's 57 bytes; loads stay inside it */
        __m128i in = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)q), shuf);
        __m128i t1 = _mm_mulhi_epu16(_mm_and_si128(in, _mm_set1_epi32(0x0FC0FC00)), _mm_set1_epi32(0x04000040));
        __m128i t3 = _mm_mullo_epi16(_mm_and_si128(in, _mm_set1_epi32(0x003F03F0)), _mm_set1_epi32(0x01000010));
        __m128i v = _mm_or_si128(t1, t3);
        __m128i idx = _mm_sub_epi8(_mm_subs_epu8(v, _mm_set1_epi8(51)), _mm_cmpgt_epi8(v, _mm_set1_epi8(25)));
        _mm_storeu_si128((__m128i *)w, _mm_add_epi8(v, _mm_shuffle_epi8(lut, idx)));
    }
}
#endif

static void b64_init(void) {
#ifdef B64_SIMD
    __builtin_cpu_init();
    b64_ssse3 = __builtin_cpu_supports("ssse3") && !getenv("BINLOGKIT_NO_SIMD");
#endif
    for (int v = 0; v < 4096; v++) {
        B64PAIR[v][0] = B64[v >> 6];
        B64PAIR[v][1] = B64[v & 63];
    }
}

/* base64 as the servers' tools write a BINLOG block (replay.b64, base64.encodebytes): lines of
   76 characters (57 bytes) joined by a newline, no newline after the last one */
static int put_b64(Out *o, const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t lines = (n + 56) / 57;
    if (grow(o, (n + 2) / 3 * 4 + lines))
        return -1;
    char *w = o->buf + o->len;
    Py_ssize_t at = 0;
    for (; at + 57 <= n; at += 57) { /* whole lines: 19 groups of 3 bytes, two table reads each */
        if (at)
            *w++ = '\n';
        const unsigned char *q = p + at;
        int g = 0;
#ifdef B64_SIMD
        if (b64_ssse3) {
            b64_line(w, q);
            g = 16, q += 48, w += 64;
        }
#endif
        for (; g < 19; g++, q += 3, w += 4) {
            uint32_t v = (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
            memcpy(w, B64PAIR[v >> 12], 2);
            memcpy(w + 2, B64PAIR[v & 0xFFF], 2);
        }
    }
    if (at < n) { /* the last, shorter line */
        if (at)
            *w++ = '\n';
        Py_ssize_t i = at;
        for (; i + 3 <= n; i += 3) {
            uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
            memcpy(w, B64PAIR[v >> 12], 2);
            memcpy(w + 2, B64PAIR[v & 0xFFF], 2);
            w += 4;
        }
        if (i < n) {
            uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
            *w++ = B64[v >> 18];
            *w++ = B64[(v >> 12) & 63];
            *w++ = i + 1 < n ? B64[(v >> 6) & 63] : '=';
            *w++ = '=';
        }
    }
    o->len = w - o->buf;
    return 0;
}

/* a JSON string as json.dumps (ensure_ascii: only ' '..'~' as they are) writes it, of ASCII bytes */
static int put_json_ascii(Out *o, const unsigned char *p, Py_ssize_t n) {
    if (grow(o, 6 * n + 2))
        return -1;
    char *w = o->buf + o->len;
    *w++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            *w++ = '\\';
            *w++ = (char)c;
        } else if (c >= 0x20 && c < 0x7f) {
            *w++ = (char)c;
        } else if (c == '\n') {
            *w++ = '\\', *w++ = 'n';
        } else if (c == '\r') {
            *w++ = '\\', *w++ = 'r';
        } else if (c == '\t') {
            *w++ = '\\', *w++ = 't';
        } else if (c == '\b') {
            *w++ = '\\', *w++ = 'b';
        } else if (c == '\f') {
            *w++ = '\\', *w++ = 'f';
        } else {
            memcpy(w, "\\u00", 4);
            w += 4;
            *w++ = HEX[c >> 4];
            *w++ = HEX[c & 15];
        }
    }
    *w++ = '"';
    o->len = w - o->buf;
    return 0;
}

/* a packed (length-encoded) integer inside [*p, end); -1: not for us (NULL marker, short) */
static int packed(const unsigned char **p, const unsigned char *end, uint64_t *v) {
    const unsigned char *q = *p;
    if (q >= end)
        return -1;
    int n = q[0] < 251 ? 0 : q[0] == 252 ? 2 : q[0] == 253 ? 3 : q[0] == 254 ? 8 : -1;
    if (n < 0 || end - q < 1 + n)
        return -1;
    *v = n ? le(q + 1, n) : q[0];
    *p = q + 1 + n;
    return 0;
}

/* plain ASCII, no NUL (names: what the Python path prints as they are) */
static int plain_ascii(const unsigned char *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (p[i] == 0 || p[i] >= 0x80)
            return 0;
    return 1;
}

/* the time stamp render.stamp() prints, remembered for the next event */
typedef struct {
    int64_t ts;
    char text[32];
    int n;
    int local; /* local time (render.stamp's time.localtime: the zone Python's time.tzset() set) */
} Stamp;

static int put_stamp(Out *o, Stamp *s, uint32_t ts) {
    if (s->ts != ts) {
        time_t t = (time_t)ts;
        struct tm tm;
        if (!(s->local ? localtime_r(&t, &tm) : gmtime_r(&t, &tm)))
            return -1;
        s->n = snprintf(s->text, sizeof s->text, "%02d%02d%02d %2d:%02d:%02d", tm.tm_year % 100, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (s->n <= 0 || s->n >= (int)sizeof s->text)
            return -1;
        s->ts = ts;
    }
    return put(o, s->text, s->n);
}

typedef struct {
    const unsigned char *cfg; /* 256 bytes: 1 = this type is rendered here; then 256 post-header lengths */
    PyObject *names;          /* tuple of 256: the JSON `"type": ..., "type_code": ..., "name": ...` or None */
    Py_buffer prefix;         /* the JSON `{"file": "...", "offset": ` */
    int opts;
    Stamp stamp;
} Ctx;

/* what one rows event or table map body holds (fast.rows / fast.table_map) */
typedef struct {
    uint64_t table_id, width, count, len_meta;
    unsigned flags, len_extra, has_extra;
    const unsigned char *extra, *before, *after, *rows, *db, *table, *types, *meta, *nulls, *opt;
    Py_ssize_t n_extra, nb, n_rows, n_db, n_table, n_opt;
    int has_meta;
} Body;

static int is_v2(int code) { return code >= WRITE_ROWS_EVENT && code <= DELETE_ROWS_EVENT; }
static int is_update(int code) { return code == UPDATE_ROWS_EVENT_V1 || code == UPDATE_ROWS_EVENT; }

/* MariaDB's GTID body (codecs/gtid.py): seq_no:8, domain_id:4, flags2:1, commit_id:8 when
   FL_GROUP_COMMIT_ID (2), then the extra part. 1: not for us (short, or flags2 with the XA bits
   64/128, whose layout the Python path reads) */
typedef struct {
    uint64_t seq, commit_id;
    uint32_t domain;
    unsigned flags2;
    const unsigned char *extra;
} Gtid;

static int parse_gtid(const unsigned char *b, const unsigned char *end, Gtid *g) {
    Py_ssize_t n = end - b;
    if (n < 13)
        return 1;
    g->flags2 = b[12];
    if (g->flags2 & (64 | 128) || (g->flags2 & 2 && n < 21))
        return 1;
    g->seq = le(b, 8);
    g->domain = (uint32_t)le(b + 8, 4);
    g->commit_id = g->flags2 & 2 ? le(b + 13, 8) : 0;
    g->extra = b + 13 + (g->flags2 & 2 ? 8 : 0);
    return 0;
}

static int parse_rows(const unsigned char *b, const unsigned char *end, int code, int phl, Body *r) {
    const unsigned char *p = b;
    int w = phl == 6 ? 4 : 6;
    if (end - p < w + 2)
        return -1;
    r->table_id = le(p, w);
    p += w;
    r->flags = (unsigned)le(p, 2);
    p += 2;
    r->has_extra = is_v2(code);
    r->extra = p;
    r->n_extra = 0;
    if (r->has_extra) {
        if (end - p < 2)
            return -1;
        r->len_extra = (unsigned)le(p, 2);
        p += 2;
        if (r->len_extra < 2 || end - p < (Py_ssize_t)(r->len_extra - 2))
            return -1;
        r->extra = p;
        r->n_extra = r->len_extra - 2;
        p += r->n_extra;
    }
    if (packed(&p, end, &r->width))
        return -1;
    if (r->width > ((uint64_t)1 << 32))
        return -1;
    r->nb = (Py_ssize_t)((r->width + 7) / 8);
    if (end - p < r->nb * (is_update(code) ? 2 : 1))
        return -1;
    r->before = p;
    p += r->nb;
    r->after = NULL;
    if (is_update(code)) {
        r->after = p;
        p += r->nb;
    }
    r->rows = p;
    r->n_rows = end - p;
    return 0;
}

static int parse_table_map(const unsigned char *b, const unsigned char *end, int phl, Body *r) {
    const unsigned char *p = b;
    int w = phl == 6 ? 4 : 6;
    if (end - p < w + 3)
        return -1;
    r->table_id = le(p, w);
    p += w;
    r->flags = (unsigned)le(p, 2);
    p += 2;
    r->n_db = *p++;
    if (end - p < r->n_db + 2)
        return -1;
    r->db = p;
    p += r->n_db;
    if (*p++ != 0)
        return -1;
    r->n_table = *p++;
    if (end - p < r->n_table + 1)
        return -1;
    r->table = p;
    p += r->n_table;
    if (*p++ != 0)
        return -1;
    if (packed(&p, end, &r->count) || (uint64_t)(end - p) < r->count)
        return -1;
    r->types = p;
    p += r->count;
    r->has_meta = p < end;
    if (r->has_meta) {
        if (packed(&p, end, &r->len_meta) || (uint64_t)(end - p) < r->len_meta)
            return -1;
        r->meta = p;
        p += r->len_meta;
        r->nb = (Py_ssize_t)((r->count + 7) / 8);
        if (end - p < r->nb)
            return -1;
        r->nulls = p;
        p += r->nb;
        r->opt = p;
        r->n_opt = end - p;
    }
    if (!plain_ascii(r->db, r->n_db) || !plain_ascii(r->table, r->n_table))
        return -1;
    return 0;
}

/* render.ROW_FLAGS: bits 0-4 (USE_SQL_FOREIGN_KEY_F: MySQL 9.x) */
static const char *ROW_FLAG_NAMES[] = {"STMT_END_F", "NO_FOREIGN_KEY_CHECKS_F", "RELAXED_UNIQUE_CHECKS_F",
                                       "COMPLETE_ROWS_F", "USE_SQL_FOREIGN_KEY_F"};
static const char *GTID_FLAG_NAMES[] = {"STANDALONE", "GROUP_COMMIT_ID", "TRANSACTIONAL", "ALLOW_PARALLEL",
                                        "WAITED", "DDL"};

/* Annotate_rows text the way the Python path splits it: only when it is ASCII without the
   other line breaks str.splitlines() knows */
static int annotate_ok(const unsigned char *q, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = q[i];
        if (c >= 0x80 || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e))
            return 0;
    }
    return 1;
}

/* a rows event's summary line (render._rows), newline included: 0, -1 no memory */
static int put_rows_summary(Out *o, int code, const Body *r) {
    int kind = code == WRITE_ROWS_EVENT_V1 || code == WRITE_ROWS_EVENT ? 0 : is_update(code) ? 1 : 2;
    static const char *names[] = {"Write_rows: table id ", "Update_rows: table id ", "Delete_rows: table id "};
    if (put(o, names[kind], (Py_ssize_t)strlen(names[kind])) || put_u64(o, r->table_id))
        return -1;
    if (r->flags & 31) {
        if (PUTS(o, " flags:"))
            return -1;
        for (int i = 0; i < 5; i++)
            if (r->flags & (1u << i) &&
                (PUTS(o, " ") || put(o, ROW_FLAG_NAMES[i], (Py_ssize_t)strlen(ROW_FLAG_NAMES[i]))))
                return -1;
    }
    return PUTS(o, "\n") ? -1 : 0;
}

/* the header comment render.header_line starts every event's text with, up to its summary:
   `#YYMMDD HH:MM:SS server id N  end_log_pos N[ CRC32 0x........] \t`; 0, -1 no memory */
static int put_header(Out *o, Stamp *st, const EventHeader *e, const unsigned char *h, int show_crc) {
    if (PUTS(o, "#") || put_stamp(o, st, e->ts) || PUTS(o, " server id ") || put_u64(o, e->sid) ||
        PUTS(o, "  end_log_pos ") || put_u64(o, e->log_pos))
        return -1;
    if (show_crc) {
        uint32_t stored = (uint32_t)le(h + e->size - 4, 4);
        char tmp[24] = " CRC32 0x";
        for (int i = 0; i < 8; i++)
            tmp[9 + i] = HEX[(stored >> (28 - 4 * i)) & 15];
        if (put(o, tmp, 17))
            return -1;
    }
    return PUTS(o, " \t");
}

/* The text of one event after its `# at` / header prefix: summary line and body lines.
   0 done, 1 not for us, -1 no memory. */
static int text_event(Out *o, Ctx *c, int code, uint32_t sid, const unsigned char *b, const unsigned char *end,
                      Body *r) {
    Py_ssize_t n = end - b;
    if (code == XID_EVENT) {
        if (n != 8)
            return 1;
        return PUTS(o, "Xid = ") || put_u64(o, le(b, 8)) || PUTS(o, "\nCOMMIT/*!*/;\n") ? -1 : 0;
    }
    if (code == GTID_EVENT) {
        Gtid g;
        if (parse_gtid(b, end, &g))
            return 1;
        unsigned f2 = g.flags2;
        if (g.extra < end && (g.extra[0] & 0x1E))
            return 1; /* flags_extra: two-phase ALTER (2|4|8) or thread_id (16): the Python path prints those */
        if (PUTS(o, "GTID ") || put_u64(o, g.domain) || PUTS(o, "-") || put_u64(o, sid) || PUTS(o, "-") ||
            put_u64(o, g.seq))
            return -1;
        if (f2 & 2 && (PUTS(o, " cid=") || put_u64(o, g.commit_id)))
            return -1;
        if (f2 & 32 ? PUTS(o, " ddl") : f2 & 4 ? PUTS(o, " trans") : 0)
            return -1;
        if (PUTS(o, "\n"))
            return -1;
        return !(f2 & 1) && PUTS(o, "START TRANSACTION\n/*!*/;\n") ? -1 : 0;
    }
    if (code == ANNOTATE_ROWS_EVENT) {
        while (n && b[n - 1] == 0)
            n--;
        if (!annotate_ok(b, n))
            return 1;
        if (PUTS(o, "Annotate_rows:\n"))
            return -1;
        Py_ssize_t s = 0;
        while (s < n) {
            const unsigned char *nl = memchr(b + s, '\n', n - s);
            Py_ssize_t j = nl ? nl - b : n;
            if (PUTS(o, "#Q> ") || put(o, (const char *)b + s, j - s) || PUTS(o, "\n"))
                return -1;
            s = j + 1;
        }
        return 0;
    }
    if (code == TABLE_MAP_EVENT) {
        if (parse_table_map(b, end, c->cfg[256 + 19], r))
            return 1;
        return PUTS(o, "Table_map: `") || put(o, (const char *)r->db, r->n_db) || PUTS(o, "`.`") ||
                       put(o, (const char *)r->table, r->n_table) || PUTS(o, "` mapped to number ") ||
                       put_u64(o, r->table_id) || PUTS(o, "\n")
                   ? -1
                   : 0;
    }
    /* rows */
    if (parse_rows(b, end, code, c->cfg[256 + code], r))
        return 1;
    return put_rows_summary(o, code, r);
}

#define KEY(o, k) PUTS(o, k)

/* the `fields` object of one event as the Python path dumps it: 0, 1 not for us, -1 memory */
static int json_fields(Out *o, Ctx *c, int code, uint32_t sid, const unsigned char *b, const unsigned char *end,
                       Body *r) {
    Py_ssize_t n = end - b;
    if (code == XID_EVENT) {
        if (n != 8)
            return 1;
        return KEY(o, "{\"xid\": ") || put_u64(o, le(b, 8)) || PUTS(o, "}") ? -1 : 0;
    }
    if (code == GTID_EVENT) {
        Gtid g;
        if (parse_gtid(b, end, &g))
            return 1;
        unsigned f2 = g.flags2;
        const unsigned char *x = g.extra;
        Py_ssize_t nx = end - x;
        if (nx > 0 && (x[0] & 0x0E))
            return 1; /* a two-phase ALTER's GTID: the Python path marks the Query after it */
        uint64_t seq = g.seq, dom = g.domain;
        if (KEY(o, "{\"seq_no\": ") || put_u64(o, seq) || KEY(o, ", \"domain_id\": ") || put_u64(o, dom) ||
            KEY(o, ", \"flags2\": ") || put_u64(o, f2) || KEY(o, ", \"commit_id\": "))
            return -1;
        if (f2 & 2 ? put_u64(o, g.commit_id) : PUTS(o, "null"))
            return -1;
        if (KEY(o, ", \"xid\": null, \"gtid\": \"") || put_u64(o, dom) || PUTS(o, "-") || put_u64(o, sid) ||
            PUTS(o, "-") || put_u64(o, seq) || PUTS(o, "\", \"flags\": ["))
            return -1;
        int first = 1;
        for (int i = 0; i < 6; i++) {
            if (!(f2 & (1u << i)))
                continue;
            if ((!first && PUTS(o, ", ")) || PUTS(o, "\"") ||
                put(o, GTID_FLAG_NAMES[i], (Py_ssize_t)strlen(GTID_FLAG_NAMES[i])) || PUTS(o, "\""))
                return -1;
            first = 0;
        }
        if (PUTS(o, "]"))
            return -1;
        if (nx > 0) { /* gtid.decode_mariadb_gtid_extra */
            unsigned fx = x[0];
            Py_ssize_t pos = 1;
            if (KEY(o, ", \"flags_extra\": ") || put_u64(o, fx))
                return -1;
            if (fx & 1 && pos < nx) {
                if (KEY(o, ", \"extra_engines\": ") || put_u64(o, x[pos]))
                    return -1;
                pos += 1;
            }
            if (fx & (4 | 8) && pos + 8 <= nx) {
                if (KEY(o, ", \"sa_seq_no\": ") || put_u64(o, le(x + pos, 8)))
                    return -1;
                pos += 8;
            }
            if (fx & 16 && pos + 4 <= nx) {
                if (KEY(o, ", \"thread_id\": ") || put_u64(o, le(x + pos, 4)))
                    return -1;
                pos += 4;
            }
            int nonzero = 0;
            for (Py_ssize_t i = pos; i < nx; i++)
                nonzero |= x[i] != 0;
            if (nonzero && (KEY(o, ", \"undecoded_extra\": \"") || put_hex(o, x + pos, nx - pos) || PUTS(o, "\"")))
                return -1;
        }
        return PUTS(o, "}") ? -1 : 0;
    }
    if (code == ANNOTATE_ROWS_EVENT) {
        while (n && b[n - 1] == 0)
            n--;
        for (Py_ssize_t i = 0; i < n; i++)
            if (b[i] >= 0x80)
                return 1;
        return KEY(o, "{\"query\": ") || put_json_ascii(o, b, n) || PUTS(o, "}") ? -1 : 0;
    }
    if (code == TABLE_MAP_EVENT) {
        if (parse_table_map(b, end, c->cfg[256 + 19], r))
            return 1;
        if (KEY(o, "{\"table_id\": ") || put_u64(o, r->table_id) || KEY(o, ", \"flags\": ") || put_u64(o, r->flags) ||
            KEY(o, ", \"len_db\": ") || put_u64(o, r->n_db) || KEY(o, ", \"db\": ") ||
            put_json_ascii(o, r->db, r->n_db) || KEY(o, ", \"len_table\": ") || put_u64(o, r->n_table) ||
            KEY(o, ", \"table\": ") || put_json_ascii(o, r->table, r->n_table) || KEY(o, ", \"column_count\": ") ||
            put_u64(o, r->count) || KEY(o, ", \"column_types\": \"") || put_hex(o, r->types, (Py_ssize_t)r->count) ||
            KEY(o, "\", \"metadata_part\": "))
            return -1;
        if (!r->has_meta)
            return PUTS(o, "null}") ? -1 : 0;
        return KEY(o, "{\"len_metadata\": ") || put_u64(o, r->len_meta) || KEY(o, ", \"metadata\": \"") ||
                       put_hex(o, r->meta, (Py_ssize_t)r->len_meta) || KEY(o, "\", \"null_bitmap\": \"") ||
                       put_hex(o, r->nulls, r->nb) || KEY(o, "\", \"optional_metadata\": \"") ||
                       put_hex(o, r->opt, r->n_opt) || PUTS(o, "\"}}")
                   ? -1
                   : 0;
    }
    if (parse_rows(b, end, code, c->cfg[256 + code], r))
        return 1;
    if (KEY(o, "{\"table_id\": ") || put_u64(o, r->table_id) || KEY(o, ", \"flags\": ") || put_u64(o, r->flags) ||
        KEY(o, ", \"len_extra_data\": "))
        return -1;
    if (r->has_extra ? put_u64(o, r->len_extra) : PUTS(o, "null"))
        return -1;
    if (KEY(o, ", \"extra_data\": \"") || put_hex(o, r->extra, r->n_extra) || KEY(o, "\", \"width\": ") ||
        put_u64(o, r->width) || KEY(o, ", \"columns_before_image\": \"") || put_hex(o, r->before, r->nb) ||
        KEY(o, "\", \"columns_after_image\": "))
        return -1;
    if (r->after ? PUTS(o, "\"") || put_hex(o, r->after, r->nb) || PUTS(o, "\"") : PUTS(o, "null"))
        return -1;
    return KEY(o, ", \"rows\": \"<") || put_u64(o, r->n_rows) || KEY(o, " bytes>\", \"len_rows\": ") ||
                   put_u64(o, r->n_rows) || PUTS(o, "}")
               ? -1
               : 0;
}

/* the length of one stored value (decoding/rowvalues' layouts, as _rowtext.c reads them), -1 for a
   type or metadata this count leaves to the Python path */
static Py_ssize_t value_len(int t, unsigned m, const unsigned char *p, const unsigned char *end) {
    int lb;
    switch (t) {
    case MYSQL_TYPE_TINY: case MYSQL_TYPE_YEAR: return 1;
    case MYSQL_TYPE_SHORT: return 2;
    case MYSQL_TYPE_INT24: case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: return 3;
    case MYSQL_TYPE_LONG: case MYSQL_TYPE_FLOAT: return 4;
    case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_DOUBLE: return 8;
    /* the old TIME / DATETIME / TIMESTAMP: MariaDB's pre-10.1 fractional ones are the same
       codes, whose precision the binlog does not carry; the Python path says what it prints */
    case MYSQL_TYPE_TIMESTAMP2: return m > 6 ? -1 : 4 + (Py_ssize_t)(m + 1) / 2;
    case MYSQL_TYPE_DATETIME2: return m > 6 ? -1 : 5 + (Py_ssize_t)(m + 1) / 2;
    case MYSQL_TYPE_TIME2: return m > 6 ? -1 : 3 + (Py_ssize_t)(m + 1) / 2;
    case MYSQL_TYPE_NEWDECIMAL: {
        int prec = (int)(m >> 8), scale = (int)(m & 0xFF);
        if (prec < 1 || prec > 65 || scale > prec)
            return -1;
        int in = prec - scale;
        return in / 9 * 4 + DIG2BYTES[in % 9] + scale / 9 * 4 + DIG2BYTES[scale % 9];
    }
    case MYSQL_TYPE_BIT: {
        int nbits = (int)(m & 0xFF) * 8 + (int)(m >> 8);
        return nbits > 64 ? -1 : (nbits + 7) / 8;
    }
    case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_VAR_STRING:
        lb = m < 256 ? 1 : 2;
        break;
    case MYSQL_TYPE_STRING: {
        unsigned real = m >> 8;
        if (real == MYSQL_TYPE_ENUM || real == MYSQL_TYPE_SET)
            return (m & 0xFF) < 1 || (m & 0xFF) > 8 ? -1 : (Py_ssize_t)(m & 0xFF);
        lb = ((((m >> 4) & 0x300) ^ 0x300) + (m & 0xFF)) < 256 ? 1 : 2;
        break;
    }
    case MYSQL_TYPE_BLOB: case MYSQL_TYPE_TINY_BLOB: case MYSQL_TYPE_MEDIUM_BLOB: case MYSQL_TYPE_LONG_BLOB:
        lb = m ? (int)m : 4;
        if (lb > 4)
            return -1;
        break;
    default:
        return -1; /* JSON, GEOMETRY, old DECIMAL, unknown: the Python path counts them */
    }
    if (end - p < lb)
        return -1;
    uint64_t n = le(p, lb);
    return (uint64_t)(end - p - lb) < n ? -1 : lb + (Py_ssize_t)n;
}

/* one row image (null bitmap over the present columns, then their values): its length, or -1 */
static Py_ssize_t image_len(const unsigned char *types, const unsigned char *metas, Py_ssize_t ncols,
                            const unsigned char *present, const unsigned char *p, const unsigned char *end) {
    Py_ssize_t npresent = 0;
    for (Py_ssize_t i = 0; i < ncols; i++)
        npresent += (present[i / 8] >> (i % 8)) & 1;
    Py_ssize_t nb = (npresent + 7) / 8, k = 0;
    if (end - p < nb)
        return -1;
    const unsigned char *q = p + nb;
    for (Py_ssize_t i = 0; i < ncols; i++) {
        if (!((present[i / 8] >> (i % 8)) & 1))
            continue;
        if (!((p[k / 8] >> (k % 8)) & 1)) {
            Py_ssize_t used = value_len(types[i], (unsigned)le(metas + 2 * i, 2), q, end);
            if (used < 0)
                return -1;
            q += used;
        }
        k++;
    }
    return q - p;
}

/* the rows of one rows event (`# Number of rows`), the table given as its column types then
   their 2-byte metadata; -1: the Python path counts them */
static long long count_rows(PyObject *table, int code, const Body *r) {
    if (!table || !PyBytes_Check(table) || PyBytes_GET_SIZE(table) % 3)
        return -1;
    Py_ssize_t ncols = PyBytes_GET_SIZE(table) / 3;
    const unsigned char *types = (const unsigned char *)PyBytes_AS_STRING(table), *metas = types + ncols;
    if ((uint64_t)ncols != r->width)
        return -1;
    const unsigned char *p = r->rows, *end = r->rows + r->n_rows;
    long long n = 0;
    while (p < end) {
        Py_ssize_t used = image_len(types, metas, ncols, r->before, p, end);
        if (used <= 0)
            return -1;
        p += used;
        if (r->after) {
            used = image_len(types, metas, ncols, r->after, p, end);
            if (used <= 0)
                return -1;
            p += used;
        }
        n++;
    }
    return n;
}

static int is_rows(int code) { return (code >= WRITE_ROWS_EVENT_V1 && code <= DELETE_ROWS_EVENT_V1) || is_v2(code); }

/* ---- decode --json -v: the rows of a rows event as JSON, by the table's plan ------------------
 *
 * rowvalues.jsonform.rows_json as json.dumps writes it (ensure_ascii, ", " and ": "), from the
 * same value readers the `###` text uses (_rowimage.h), by the plan the Python decoder made once
 * per table map (rowvalues.jsonform.c_json_plan: column types, metadata, BINARY(n) pads, a J_*
 * kind per column, the JSON keys, labels or a charset table, the line's `"table"...` part).
 * Anything it does not write exactly as the reference -- a value the readers refuse, a float
 * that is not finite, an image that does not fit -- makes it return 1 and the event is the
 * Python path's. */

enum {
    J_INT, J_UINT, J_UTF8, J_HEX, J_SBCS, J_ASCII, J_NUM, J_ENUM, J_SET, J_FLOAT, J_DECIMAL, J_TEXT, J_TIMESTAMP,
    J_GEOMETRY, J_DATE, J_KINDS
};

typedef struct {
    const unsigned char *types, *metas, *pads, *kinds;
    PyObject *keys, *extra; /* tuples, a bytes per column / None, a tuple of labels or a bytes table */
    Py_ssize_t ncols;
    Out *scratch;
} JPlan;

/* one code point as json.dumps (ensure_ascii) writes it; room for 12 bytes is there */
static inline char *json_cp(char *w, uint32_t cp) {
    if (cp >= 0x20 && cp < 0x7f) {
        if (cp == '"' || cp == '\\')
            *w++ = '\\';
        *w++ = (char)cp;
        return w;
    }
    char named = cp == '\n' ? 'n' : cp == '\r' ? 'r' : cp == '\t' ? 't' : cp == '\b' ? 'b' : cp == '\f' ? 'f' : 0;
    if (named) {
        *w++ = '\\';
        *w++ = named;
        return w;
    }
    if (cp >= 0x10000) { /* a surrogate pair */
        cp -= 0x10000;
        w = json_cp(w, 0xD800 | (cp >> 10));
        return json_cp(w, 0xDC00 | (cp & 0x3FF));
    }
    *w++ = '\\', *w++ = 'u';
    *w++ = HEX[(cp >> 12) & 15], *w++ = HEX[(cp >> 8) & 15], *w++ = HEX[(cp >> 4) & 15], *w++ = HEX[cp & 15];
    return w;
}

/* bytes as a JSON string if they are UTF-8 as Python's strict decoder takes it: 0 written, 1 not
   UTF-8 (nothing written), -1 no memory */
static int json_utf8(Out *o, const unsigned char *s, Py_ssize_t n) {
    if (grow(o, 6 * n + 2))
        return -1;
    char *w = o->buf + o->len, *start = w;
    *w++ = '"';
    Py_ssize_t i = 0;
    while (i < n) {
        while (i + 8 <= n) { /* runs of plain ASCII, eight bytes at a time */
            uint64_t x;
            memcpy(&x, s + i, 8);
            if ((x & 0x8080808080808080ULL) || HAS_CONTROL(x) || HAS_BYTE(x, '"') || HAS_BYTE(x, '\\') ||
                HAS_BYTE(x, 0x7f))
                break;
            memcpy(w, s + i, 8);
            w += 8, i += 8;
        }
        if (i >= n)
            break;
        unsigned char c = s[i];
        if (c < 0x80) {
            w = json_cp(w, c);
            i++;
            continue;
        }
        uint32_t cp;
        int len;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            len = 2, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF) {
            len = 3, cp = c & 0x0F;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4, cp = c & 0x07;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            o->len = start - o->buf;
            return 1;
        }
        if (n - i < len || s[i + 1] < lo || s[i + 1] > hi) {
            o->len = start - o->buf;
            return 1;
        }
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                o->len = start - o->buf;
                return 1;
            }
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        w = json_cp(w, cp);
        i += len;
    }
    *w++ = '"';
    o->len = w - o->buf;
    return 0;
}

/* "0x" and the hex of the bytes, zeros up to pad */
static int json_hex(Out *o, const unsigned char *s, Py_ssize_t n, Py_ssize_t pad) {
    Py_ssize_t zeros = pad > n ? pad - n : 0;
    if (PUTS(o, "\"0x") || put_hex(o, s, n) || grow(o, 2 * zeros + 1))
        return -1;
    memset(o->buf + o->len, '0', 2 * zeros);
    o->len += 2 * zeros;
    return PUTS(o, "\"");
}

/* jsonform._bytes_json: UTF-8 text, else 0x-hex */
static int json_bytes(Out *o, const unsigned char *s, Py_ssize_t n) {
    int r = json_utf8(o, s, n);
    return r > 0 ? json_hex(o, s, n, 0) : r;
}

/* the p digits of buf ("[-]d.ddde[+-]x", %.*e's) one unit up or down in the last place, when that
   reads back as x and buf's own digits do not: what repr() picks at that length (at a power of two
   the interval that reads back as x is lopsided); buf rewritten to it. 1 found, 0 not */
static int near_digits(char *buf, double x) {
    char *e = strchr(buf, 'e');
    if (!e)
        return 0;
    for (int step = 1; step >= -1; step -= 2) {
        char cand[48];
        memcpy(cand, buf, sizeof cand);
        char *q = cand + (e - buf) - 1;
        int carry = step;
        for (; q >= cand && carry; q--) {
            if (*q == '.')
                continue;
            if (*q < '0' || *q > '9')
                break;
            int d = *q - '0' + carry;
            carry = d > 9 ? 1 : d < 0 ? -1 : 0;
            *q = (char)('0' + (d + 10) % 10);
        }
        const char *lead = cand + (cand[0] == '-');
        if (carry || *lead == '0') /* 9.99 up or 1.00 down: another length, found at its own */
            continue;
        if (strtod(cand, NULL) == x) {
            memcpy(buf, cand, sizeof cand);
            return 1;
        }
    }
    return 0;
}

/* a double as repr() writes it (the shortest digits that read back as it; exponent from 1e16 up and
   below 1e-4); -1 not finite (the Python path's) or no memory */
static int json_double(Out *o, double x) {
    if (!isfinite(x))
        return -1;
    char buf[48];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x || near_digits(buf, x))
            break;
    }
    if (p > 17)
        return -1;
    char digits[24];
    int nd = 0, neg = buf[0] == '-';
    const char *q = buf + neg;
    for (; *q && *q != 'e'; q++)
        if (*q != '.')
            digits[nd++] = *q;
    if (*q != 'e')
        return -1;
    int decpt = atoi(q + 1) + 1;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (x == 0)
        decpt = 1;
    char out[64];
    int k = 0;
    if (neg)
        out[k++] = '-';
    if (decpt <= -4 || decpt > 16) {
        out[k++] = digits[0];
        if (nd > 1) {
            out[k++] = '.';
            memcpy(out + k, digits + 1, nd - 1);
            k += nd - 1;
        }
        k += snprintf(out + k, sizeof out - k, "e%+.02d", decpt - 1);
    } else if (decpt <= 0) {
        out[k++] = '0', out[k++] = '.';
        for (int i = 0; i < -decpt; i++)
            out[k++] = '0';
        memcpy(out + k, digits, nd);
        k += nd;
    } else if (decpt >= nd) {
        memcpy(out + k, digits, nd);
        k += nd;
        for (int i = nd; i < decpt; i++)
            out[k++] = '0';
        out[k++] = '.', out[k++] = '0';
    } else {
        memcpy(out + k, digits, decpt);
        k += decpt;
        out[k++] = '.';
        memcpy(out + k, digits + decpt, nd - decpt);
        k += nd - decpt;
    }
    return put(o, out, k);
}

/* a string value's bytes (value()'s layouts for VARCHAR, CHAR, BLOB): the bytes it used, or -1 */
static Py_ssize_t str_value(int t, unsigned m, const unsigned char *p, const unsigned char *end,
                            const unsigned char **v, Py_ssize_t *n) {
    int lb;
    if (t == MYSQL_TYPE_VARCHAR || t == MYSQL_TYPE_VAR_STRING)
        lb = m < 256 ? 1 : 2;
    else if (t == MYSQL_TYPE_STRING)
        lb = ((((m >> 4) & 0x300) ^ 0x300) + (m & 0xFF)) < 256 ? 1 : 2;
    else
        lb = m ? (int)m : 4;
    if (lb > 4)
        return -1;
    *n = prefixed(p, end, lb, v);
    return *n < 0 ? -1 : lb + *n;
}

/* one column's JSON value: the bytes it used, or -1 (not for us; memory: an error set) */
static Py_ssize_t json_value(Out *o, const JPlan *pl, Py_ssize_t i, const unsigned char *p, const unsigned char *end) {
    int t = pl->types[i], kind = pl->kinds[i];
    unsigned m = (unsigned)le(pl->metas + 2 * i, 2);
    const unsigned char *v;
    Py_ssize_t n, used;
    switch (kind) {
    case J_INT: case J_UINT: {
        int w = t == MYSQL_TYPE_TINY ? 1 : t == MYSQL_TYPE_SHORT ? 2 : t == MYSQL_TYPE_INT24 ? 3
                : t == MYSQL_TYPE_LONG ? 4 : t == MYSQL_TYPE_LONGLONG ? 8 : 0;
        if (!w || p + w > end)
            return -1;
        uint64_t u = le(p, w);
        if (kind == J_INT && (u >> (8 * w - 1)) & 1) {
            int64_t s = w < 8 ? (int64_t)u - ((int64_t)1 << (8 * w)) : (int64_t)u;
            return put_i64(o, s) ? -1 : w;
        }
        return put_u64(o, u) ? -1 : w;
    }
    case J_UTF8: case J_HEX: case J_ASCII: case J_SBCS: {
        if (t != MYSQL_TYPE_VARCHAR && t != MYSQL_TYPE_VAR_STRING && t != MYSQL_TYPE_STRING && t != MYSQL_TYPE_BLOB &&
            t != MYSQL_TYPE_TINY_BLOB && t != MYSQL_TYPE_MEDIUM_BLOB && t != MYSQL_TYPE_LONG_BLOB)
            return -1;
        if (t == MYSQL_TYPE_STRING && ((m >> 8) == MYSQL_TYPE_ENUM || (m >> 8) == MYSQL_TYPE_SET))
            return -1;
        if ((used = str_value(t, m, p, end, &v, &n)) < 0)
            return -1;
        int r = 0;
        if (kind == J_HEX)
            r = json_hex(o, v, n, (Py_ssize_t)le(pl->pads + 2 * i, 2));
        else if (kind == J_UTF8)
            r = json_bytes(o, v, n);
        else if (kind == J_ASCII) {
            Py_ssize_t k = 0;
            while (k < n && v[k] < 0x80)
                k++;
            r = k == n ? put_json_ascii(o, v, n) : json_bytes(o, v, n);
        } else {
            PyObject *table = PyTuple_GET_ITEM(pl->extra, i);
            if (!PyBytes_Check(table) || PyBytes_GET_SIZE(table) != 1024)
                return -1;
            const unsigned char *cps = (const unsigned char *)PyBytes_AS_STRING(table);
            Py_ssize_t k = 0;
            while (k < n && le(cps + 4 * v[k], 4) != 0xFFFFFFFFu)
                k++;
            if (k < n)
                r = json_bytes(o, v, n);
            else if (grow(o, 6 * n + 2))
                r = -1;
            else {
                char *w = o->buf + o->len;
                *w++ = '"';
                for (k = 0; k < n; k++)
                    w = json_cp(w, (uint32_t)le(cps + 4 * v[k], 4));
                *w++ = '"';
                o->len = w - o->buf;
            }
        }
        return r ? -1 : used;
    }
    case J_NUM: case J_ENUM: case J_SET: {
        uint64_t x;
        if (t == MYSQL_TYPE_YEAR) {
            if (p + 1 > end)
                return -1;
            x = p[0] ? 1900 + p[0] : 0, used = 1;
        } else if (t == MYSQL_TYPE_BIT) {
            int nbits = (int)(m & 0xFF) * 8 + (int)(m >> 8);
            used = (nbits + 7) / 8;
            if (used > 8 || p + used > end)
                return -1;
            x = be(p, (int)used);
            if (nbits < 64 && x >> nbits)
                return -1;
        } else if (t == MYSQL_TYPE_STRING && ((m >> 8) == MYSQL_TYPE_ENUM || (m >> 8) == MYSQL_TYPE_SET)) {
            used = m & 0xFF;
            if (used < 1 || used > 8 || p + used > end)
                return -1;
            x = le(p, (int)used);
        } else {
            return -1;
        }
        PyObject *labels = kind == J_NUM ? NULL : PyTuple_GET_ITEM(pl->extra, i);
        if (labels && !PyTuple_Check(labels))
            return -1;
        if (kind == J_ENUM && x <= (uint64_t)PyTuple_GET_SIZE(labels)) {
            if (!x)
                return PUTS(o, "\"\"") ? -1 : used;
            PyObject *s = PyTuple_GET_ITEM(labels, (Py_ssize_t)x - 1);
            if (!PyBytes_Check(s))
                return -1;
            return put(o, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s)) ? -1 : used;
        }
        if (kind == J_SET) {
            int first = 1;
            if (PUTS(o, "\""))
                return -1;
            for (Py_ssize_t b = 0; b < PyTuple_GET_SIZE(labels) && b < 64; b++) {
                if (!(x >> b & 1))
                    continue;
                PyObject *s = PyTuple_GET_ITEM(labels, b);
                if (!PyBytes_Check(s) || (!first && PUTS(o, ",")) || put(o, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s)))
                    return -1;
                first = 0;
            }
            return PUTS(o, "\"") ? -1 : used;
        }
        return put_u64(o, x) ? -1 : used;
    }
    case J_FLOAT: {
        double d;
        if (t == MYSQL_TYPE_FLOAT) {
            if (p + 4 > end)
                return -1;
            float f;
            uint32_t u = (uint32_t)le(p, 4);
            memcpy(&f, &u, 4);
            d = (double)f, used = 4;
        } else if (t == MYSQL_TYPE_DOUBLE) {
            if (p + 8 > end)
                return -1;
            uint64_t u = le(p, 8);
            memcpy(&d, &u, 8);
            used = 8;
        } else {
            return -1;
        }
        return json_double(o, d) ? -1 : used;
    }
    case J_DECIMAL:
        if (t != MYSQL_TYPE_NEWDECIMAL || PUTS(o, "\"") || decimal(o, p, end, (int)(m >> 8), (int)(m & 0xFF), &used) ||
            PUTS(o, "\""))
            return -1;
        return used;
    case J_DATE: {
        if ((t != MYSQL_TYPE_DATE && t != MYSQL_TYPE_NEWDATE) || p + 3 > end)
            return -1;
        uint64_t x = le(p, 3);
        return putf(o, "\"%04d-%02d-%02d\"", (int)(x >> 9), (int)((x >> 5) & 15), (int)(x & 31)) ? -1 : 3;
    }
    case J_TEXT: case J_TIMESTAMP: {
        if (kind == J_TEXT ? t != MYSQL_TYPE_DATETIME && t != MYSQL_TYPE_DATETIME2 && t != MYSQL_TYPE_TIME &&
                                 t != MYSQL_TYPE_TIME2
                           : t != MYSQL_TYPE_TIMESTAMP && t != MYSQL_TYPE_TIMESTAMP2)
            return -1;
        Out *s = pl->scratch;
        Made none = {NULL, 0, 0, 0};
        s->len = 0;
        if ((used = value(s, t, (int)m, p, end, &none)) < 0 || !s->len)
            return -1;
        if (kind == J_TEXT) { /* the text without its quotes */
            if (s->len < 2 || s->buf[0] != '\'' || s->buf[s->len - 1] != '\'')
                return -1;
            return put_json_ascii(o, (const unsigned char *)s->buf + 1, s->len - 2) ? -1 : used;
        }
        /* values.timestamp_value: the zero timestamp "0000-00-00 00:00:00" (an int 0 when its text is
           all digits), else seconds: an int, or with a fraction the float its text reads as */
        const char *dot = memchr(s->buf, '.', s->len);
        int zero = 1;
        for (Py_ssize_t k = 0; k < s->len; k++)
            zero &= s->buf[k] == '0' || s->buf[k] == '.';
        if (zero && dot)
            return PUTS(o, "\"0000-00-00 00:00:00\"") ? -1 : used;
        if (!dot)
            return put(o, s->buf, s->len) ? -1 : used;
        if (grow(s, 1))
            return -1;
        s->buf[s->len] = 0;
        return json_double(o, strtod(s->buf, NULL)) ? -1 : used;
    }
    case J_GEOMETRY: {
        int lb = m ? (int)m : 4;
        if (t != MYSQL_TYPE_GEOMETRY || lb > 4 || (n = prefixed(p, end, lb, &v)) < 4)
            return -1;
        if (PUTS(o, "{\"srid\": ") || put_u64(o, le(v, 4)) || PUTS(o, ", \"wkb\": \"") || put_hex(o, v + 4, n - 4) ||
            PUTS(o, "\"}"))
            return -1;
        return lb + n;
    }
    }
    return -1;
}

/* one image as a JSON object: the bytes it used, or -1 */
static Py_ssize_t json_image(Out *o, const JPlan *pl, const unsigned char *present, const unsigned char *p,
                             const unsigned char *end) {
    Py_ssize_t nb = (count_present(present, pl->ncols) + 7) / 8, k = 0;
    if (p + nb > end)
        return -1;
    const unsigned char *nulls = p, *q = p + nb;
    if (PUTS(o, "{"))
        return -1;
    for (Py_ssize_t i = 0; i < pl->ncols; i++) {
        if (!((present[i / 8] >> (i % 8)) & 1))
            continue;
        PyObject *key = PyTuple_GET_ITEM(pl->keys, i);
        if ((k && PUTS(o, ", ")) || put(o, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)))
            return -1;
        if ((nulls[k / 8] >> (k % 8)) & 1) {
            if (PUTS(o, "null"))
                return -1;
        } else {
            Py_ssize_t used = json_value(o, pl, i, q, end);
            if (used < 0)
                return -1;
            q += used;
        }
        k++;
    }
    return PUTS(o, "}") ? -1 : q - p;
}

/* the `, "table": ..., "rows": [...]` of a rows event's JSON line (its closing "}" not written):
   0, 1 not for us (o->len may have grown: the caller drops what is past its mark), -1 no memory */
static int json_rows(Out *o, Out *scratch, int code, const Body *r, PyObject *plan) {
    if (!plan || !PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 7)
        return 1;
    PyObject *types = PyTuple_GET_ITEM(plan, 0), *metas = PyTuple_GET_ITEM(plan, 1), *pads = PyTuple_GET_ITEM(plan, 2),
             *kinds = PyTuple_GET_ITEM(plan, 3), *head = PyTuple_GET_ITEM(plan, 6);
    JPlan pl = {NULL, NULL, NULL, NULL, PyTuple_GET_ITEM(plan, 4), PyTuple_GET_ITEM(plan, 5), 0, scratch};
    if (!PyBytes_Check(types) || !PyBytes_Check(metas) || !PyBytes_Check(pads) || !PyBytes_Check(kinds) ||
        !PyBytes_Check(head) || !PyTuple_Check(pl.keys) || !PyTuple_Check(pl.extra))
        return 1;
    pl.ncols = PyBytes_GET_SIZE(types);
    if (PyBytes_GET_SIZE(metas) != 2 * pl.ncols || PyBytes_GET_SIZE(pads) != 2 * pl.ncols ||
        PyBytes_GET_SIZE(kinds) != pl.ncols || PyTuple_GET_SIZE(pl.keys) != pl.ncols ||
        PyTuple_GET_SIZE(pl.extra) != pl.ncols || (uint64_t)pl.ncols != r->width)
        return 1;
    for (Py_ssize_t i = 0; i < pl.ncols; i++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(pl.keys, i)))
            return 1;
    pl.types = (const unsigned char *)PyBytes_AS_STRING(types);
    pl.metas = (const unsigned char *)PyBytes_AS_STRING(metas);
    pl.pads = (const unsigned char *)PyBytes_AS_STRING(pads);
    pl.kinds = (const unsigned char *)PyBytes_AS_STRING(kinds);
    int kind = code == WRITE_ROWS_EVENT || code == WRITE_ROWS_EVENT_V1 ? 0 : is_update(code) ? 1 : 2;
    if (kind == 1 && !r->after)
        return 1;
    if (put(o, PyBytes_AS_STRING(head), PyBytes_GET_SIZE(head)))
        return 1;
    const unsigned char *p = r->rows, *end = r->rows + r->n_rows;
    while (p < end) {
        const unsigned char *row = p;
        Py_ssize_t used;
        if (row != r->rows && PUTS(o, ", "))
            return 1;
        if (PUTS(o, "{\"before\": "))
            return 1;
        if (kind == 0) {
            if (PUTS(o, "null, \"after\": ") || (used = json_image(o, &pl, r->before, p, end)) < 0)
                return 1;
            p += used;
        } else {
            if ((used = json_image(o, &pl, r->before, p, end)) < 0)
                return 1;
            p += used;
            if (PUTS(o, ", \"after\": "))
                return 1;
            if (kind == 1) {
                if ((used = json_image(o, &pl, r->after, p, end)) < 0)
                    return 1;
                p += used;
            } else if (PUTS(o, "null")) {
                return 1;
            }
        }
        if (PUTS(o, "}"))
            return 1;
        if (p == row)
            return 1; /* a row of no bytes: never loop forever */
    }
    return PUTS(o, "]") ? 1 : 0;
}

/* decode --json -v (O_JROWS): a Table_map's plan looked up by its body (plans: body -> the Python
   decoder's rowvalues.jsonform.c_json_plan, or None) and kept for its table id (jtables), the map
   kept for the Python decoder (maps: table id -> (event bytes, offset), registered before it reads
   an event); a rows event's values added by its table's plan. 0, 1 the Python path's (a map not
   planned yet, or None; rows C does not write), -1 an error set */
static int jrows_event(Out *o, Out *scratch, const EventHeader *e, const unsigned char *h, const unsigned char *b,
                       const unsigned char *end, long long at, const Body *r, PyObject *plans, PyObject *jtables,
                       PyObject *maps) {
    PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)r->table_id);
    if (!key)
        return -1;
    int res = 1;
    if (e->code == TABLE_MAP_EVENT) {
        PyObject *body = PyBytes_FromStringAndSize((const char *)b, end - b);
        PyObject *plan = body ? PyDict_GetItemWithError(plans, body) : NULL;
        Py_XDECREF(body);
        if (plan && plan != Py_None) {
            PyObject *ev = Py_BuildValue("(y#L)", (const char *)h, (Py_ssize_t)e->size, at);
            res = !ev || PyDict_SetItem(jtables, key, plan) || PyDict_SetItem(maps, key, ev) ? -1 : 0;
            Py_XDECREF(ev);
        } else if (PyErr_Occurred()) {
            res = -1;
        }
    } else {
        PyObject *plan = PyDict_GetItemWithError(jtables, key);
        if (plan) {
            Py_ssize_t mark = o->len;
            res = json_rows(o, scratch, e->code, r, plan);
            if (res)
                o->len = mark;
        } else if (PyErr_Occurred()) {
            res = -1;
        }
    }
    Py_DECREF(key);
    return res;
}

/* what the Python path is handed with an event: (code, timestamp, server_id, size, log_pos, flags,
   checksum_ok), ok -1 none, 0 mismatch, 1 good */
static PyObject *header_info(const EventHeader *e, int ok) {
    return Py_BuildValue("(iIIIIIO)", e->code, e->ts, e->sid, e->size, e->log_pos, e->flags,
                         ok < 0 ? Py_None : ok ? Py_True : Py_False);
}

enum { STOP_NONE = -1, STOP_ERROR = -2 };

/* The framing both walks start every event with (reader.read_events' checks): the next event of
   buf[rel:filled] (the file from offset `at`), its header read into *e and, with O_CRC_ON, its
   CRC32 checked (*ok: -1 none, 0 mismatch, 1 good). STOP_NONE: the event is whole and the walk
   goes on with it; else the status to stop at it with: MORE (not all of it in the window),
   HANDOVER (irregular framing, or a mismatch with O_VERIFY: the reader's to report), PYTHON (a
   Format_description: the format and its checksum are the Python path's; *info: header_info);
   STOP_ERROR: an exception set (the CRC callable failed, no memory). */
static int next_event(const unsigned char *h, Py_ssize_t avail, long long at, int opts, PyObject *crc, EventHeader *e,
                      int *ok, PyObject **info) {
    *ok = -1;
    if (avail < LEN_HEADER)
        return MORE;
    *e = event_header(h);
    if ((at == LEN_MAGIC && e->code != FORMAT_DESCRIPTION_EVENT && e->code != START_EVENT_V3) ||
        e->size < LEN_HEADER || e->size > MAX_EVENT_SIZE)
        return HANDOVER;
    if (avail < (Py_ssize_t)e->size)
        return MORE;
    if (e->code == FORMAT_DESCRIPTION_EVENT)
        return (*info = header_info(e, -1)) ? PYTHON : STOP_ERROR;
    if (opts & O_CRC_ON) {
        if (e->size < LEN_HEADER + 4)
            return HANDOVER;
        uint32_t actual;
        if (crc_call(crc, h, e->size - 4, &actual))
            return STOP_ERROR;
        *ok = actual == (uint32_t)le(h + e->size - 4, 4);
        if (!*ok && opts & O_VERIFY)
            return HANDOVER;
    }
    return STOP_NONE;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    Py_buffer buf, cfg;
    Py_ssize_t rel, filled;
    long long at;
    PyObject *crc, *names, *plans = NULL, *jtables = NULL, *maps = NULL;
    Ctx c;
    if (!PyArg_ParseTuple(args, "y*nnLiOy*Oy*|O!O!O!", &buf, &rel, &filled, &at, &c.opts, &crc, &cfg, &names,
                          &c.prefix, &PyDict_Type, &plans, &PyDict_Type, &jtables, &PyDict_Type, &maps))
        return NULL;
    PyObject *result = NULL, *info = NULL;
    Out o = {NULL, 0, 0}, scratch = {NULL, 0, 0};
    int status = MORE, first = 1;
    long long events = 0, checksummed = 0;
    Py_ssize_t mark = 0;
    Body r;
    c.cfg = cfg.buf;
    c.names = names;
    c.stamp.ts = -1;
    c.stamp.local = 0;
    if (!(c.opts & O_JSON) || !maps)
        c.opts &= ~O_JROWS;
    if (cfg.len != 512 || rel < 0 || filled > buf.len || rel > filled ||
        ((c.opts & O_JSON) && (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != 256))) {
        PyErr_SetString(PyExc_ValueError, "walk: bad arguments");
        goto done;
    }
    const unsigned char *base = buf.buf;
    for (;; first = 0) {
        EventHeader e;
        int ok;
        if ((status = next_event(base + rel, filled - rel, at, c.opts, crc, &e, &ok, &info)) != STOP_NONE)
            break;
        const unsigned char *h = base + rel;
        if (e.code == START_EVENT_V3 || e.code == START_ENCRYPTION_EVENT) { /* the Python path's */
            status = PYTHON;
            info = header_info(&e, ok);
            break;
        }
        if (c.opts & O_COUNT) {
            events++;
            checksummed += ok >= 0;
            rel += e.size;
            at += e.size;
            continue;
        }
        if ((first && c.opts & O_FIRST_PY) || !c.cfg[e.code] ||
            ((c.opts & O_JSON) && PyTuple_GET_ITEM(names, e.code) == Py_None)) {
            status = PYTHON;
            info = header_info(&e, ok);
            break;
        }
        const unsigned char *b = h + LEN_HEADER, *end = h + e.size - (c.opts & O_SHOW_CRC ? 4 : 0);
        if (end < b) {
            status = PYTHON;
            info = header_info(&e, ok);
            break;
        }
        mark = o.len;
        int res;
        if (c.opts & O_JSON) {
            PyObject *piece = PyTuple_GET_ITEM(names, e.code);
            res = put(&o, c.prefix.buf, c.prefix.len) || put_u64(&o, (uint64_t)at) || PUTS(&o, ", \"end_offset\": ") ||
                  put_u64(&o, (uint64_t)at + e.size) || PUTS(&o, ", ") ||
                  put(&o, PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece)) || PUTS(&o, ", \"timestamp\": ") ||
                  put_u64(&o, e.ts) || PUTS(&o, ", \"server_id\": ") || put_u64(&o, e.sid) ||
                  PUTS(&o, ", \"event_size\": ") || put_u64(&o, e.size) || PUTS(&o, ", \"log_pos\": ") ||
                  put_u64(&o, e.log_pos) || PUTS(&o, ", \"flags\": ") || put_u64(&o, e.flags) ||
                  PUTS(&o, ", \"checksum_ok\": ") ||
                  (ok < 0 ? PUTS(&o, "null") : ok ? PUTS(&o, "true") : PUTS(&o, "false")) ||
                  PUTS(&o, ", \"fields\": ")
                ? -1
                : 0;
            if (!res)
                res = json_fields(&o, &c, e.code, e.sid, b, end, &r);
            if (!res && c.opts & O_JROWS && (e.code == TABLE_MAP_EVENT || is_rows(e.code)))
                res = jrows_event(&o, &scratch, &e, h, b, end, at, &r, plans, jtables, maps);
            if (!res)
                res = PUTS(&o, "}\n") ? -1 : 0;
        } else {
            res = PUTS(&o, "# at ") || put_u64(&o, (uint64_t)at) || PUTS(&o, "\n") ||
                          put_header(&o, &c.stamp, &e, h, c.opts & O_SHOW_CRC)
                      ? -1
                      : 0;
            if (!res)
                res = text_event(&o, &c, e.code, e.sid, b, end, &r);
        }
        if (res < 0) {
            if (!PyErr_Occurred())
                PyErr_NoMemory();
            goto done;
        }
        if (res > 0) { /* not for us after all: the Python path reads it */
            o.len = mark;
            status = PYTHON;
            info = header_info(&e, ok);
            break;
        }
        Py_ssize_t body_at = b - base, body_end = end - base;
        rel += e.size;
        at += e.size;
        if (c.opts & O_VERBOSE && (e.code == TABLE_MAP_EVENT || is_rows(e.code))) {
            status = e.code == TABLE_MAP_EVENT ? TABLEMAP : ROWS;
            info = Py_BuildValue("(iKnnn)", e.code, (unsigned long long)r.table_id, body_at, body_end, mark);
            break;
        }
        if (o.len > OUT_LIMIT) {
            status = FULL;
            break;
        }
    }
    if (status != MORE && status != HANDOVER && status != FULL && !info)
        goto done;
    result = Py_BuildValue("(innLy#OLL)", status, rel, filled, at, o.buf ? o.buf : "", o.len, info ? info : Py_None,
                           events, checksummed);
done:
    Py_XDECREF(info);
    PyMem_Free(o.buf);
    PyMem_Free(scratch.buf);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&cfg);
    PyBuffer_Release(&c.prefix);
    return result;
}

/* ---- Replayable text (decode's default): decoding/replay.py's Replay for the hot events ----------
 *
 * A Replayer is the part of a decoding.replay.Replay this loop prints by, lent to it
 * (Replay.lend) and given back (Replay.settle): the session values the MariaDB GTID statements
 * are printed by when they change, whether a transaction is open, and a statement's row events
 * not written yet (the tools' head / body caches: headers, base64, rows counted; an
 * Annotate_rows' lines). Its walk() prints, byte for byte as Replay.feed does, MariaDB's GTID,
 * Annotate_rows, Table_map, Write/Update/Delete_rows v1/v2 and Xid -- each only when its CRC32 was
 * checked good and nothing about it is unusual; anything else (and every other event) stops the
 * walk at that event (PYTHON) with nothing of that event taken, and the caller settles the
 * state back into the Replay before feeding it the event. */

enum {
    O_UTC = 1 << 9,          /* times in UTC (else local time, as time.localtime) */
    O_ROWCOUNT = 1 << 10,    /* `# Number of rows: N` after a statement's BINLOG block (Tool.row_count) */
    O_SKIPREPL = 1 << 11,    /* `SET skip_replication=` when the flag changes (Tool.skip_replication) */
    O_GTIDS = 1 << 12,       /* MariaDB GTID statements printed (not --skip-gtids) */
    O_ANNOTATE = 1 << 13,    /* Annotate_rows held for the next Table_map (Tool.annotate_with_table_map) */
    O_TABLES = 1 << 14,      /* rows counted from the table maps' column types (no column hints) */
    O_SV_MARIADB = 1 << 15,  /* Query status variables with MariaDB's codes 128.. (flavor.status_vars_mariadb) */
    O_SHOWS_XID = 1 << 16    /* a Query's header shows `xid=` (render.QUERY_SHOWS_XID) */
};

typedef struct {
    PyObject_HEAD
    Out text;              /* walk()'s output, kept from call to call (its pages stay mapped) */
    int out_fd;            /* >= 0: walk() writes its text to this descriptor itself and returns b"" */
    Py_ssize_t direct_min; /* ... and a statement whose base64 and rows exceed this, from where they are held */
    Out head, body, annot; /* a statement's header lines, its base64 blocks ("\n" between), Annotate_rows' lines */
    int has_annot;
    Out tail;        /* with O_VERBOSE: its `###` rows, each event's lines without the last "\n", "\n" between */
    long long ntail; /* ... and how many events' (Replay.tail's length) */
    Out notes_buf;   /* scratch: a Note per column of the rows event being printed */
    long long rows; /* rows of the statement, for `# Number of rows` */
    long long allow_parallel, domain_id, server_id; /* Session values, -1 for None */
    int skip_replication, gtid_flags2, in_trx, gtid_pending;
    /* the query context Replay printed last, read only here (a BEGIN / COMMIT that would print
       any of it again goes to Replay): -1 for None */
    long long thread_id, flags2, sql_mode, auto_increment_increment, auto_increment_offset, charset_client,
        collation_connection, collation_server, lc_time_names, charset_database, default_collation_for_utf8mb4;
    PyObject *time_zone; /* bytes */
    PyObject *tables; /* dict: table id -> column types + 2-byte metadata (count_rows), this loop's maps */
    PyObject *maps;   /* dict: table id -> (event bytes, offset): maps printed here, for the Python decoder */
    PyObject *notes;  /* bytes: lines printed under a Table_map's header (Tool.table_map_notes) */
    PyObject *plans;  /* dict: Table_map body -> what its rows print by with O_VERBOSE, from the Python
                         decoder's table (reading.fastdecode._verbose_plan: (types, metas, name,
                         notes | None, escape)), or None: its rows are the Python path's */
    PyObject *vtables; /* dict: table id -> that plan, for the maps printed here */
} Replayer;

/* a table map's column types then their metadata as 2-byte values (rowvalues.tables.table_from_map,
   rowvalues.images.c_args), or NULL with no error: a type whose values count_rows does not size,
   or metadata shorter than its types need */
static PyObject *map_columns(const Body *r) {
    Py_ssize_t n = (Py_ssize_t)r->count;
    const unsigned char *m = r->has_meta ? r->meta : NULL, *mend = m ? m + r->len_meta : NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, 3 * n);
    if (!out)
        return NULL;
    unsigned char *types = (unsigned char *)PyBytes_AS_STRING(out), *metas = types + n;
    for (Py_ssize_t i = 0; i < n; i++) {
        int t = r->types[i], nb;
        switch (t) {
        case MYSQL_TYPE_TINY: case MYSQL_TYPE_YEAR: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_INT24:
        case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: case MYSQL_TYPE_LONG: case MYSQL_TYPE_LONGLONG:
            nb = 0;
            break;
        case MYSQL_TYPE_FLOAT: case MYSQL_TYPE_DOUBLE: case MYSQL_TYPE_BLOB: case MYSQL_TYPE_TIMESTAMP2:
        case MYSQL_TYPE_DATETIME2: case MYSQL_TYPE_TIME2:
            nb = 1;
            break;
        case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_VAR_STRING: case MYSQL_TYPE_STRING: case MYSQL_TYPE_NEWDECIMAL:
        case MYSQL_TYPE_BIT:
            nb = 2;
            break;
        default: /* JSON, GEOMETRY, VECTOR, the old temporals and DECIMAL...: the Python path */
            Py_DECREF(out);
            return NULL;
        }
        unsigned v = 0;
        if (nb) {
            if (!m || mend - m < nb) {
                Py_DECREF(out);
                return NULL;
            }
            v = nb == 1 ? m[0] : (t == MYSQL_TYPE_VARCHAR || t == MYSQL_TYPE_VAR_STRING) ? (unsigned)le(m, 2)
                                                                                        : (unsigned)m[0] << 8 | m[1];
            m += nb;
        }
        types[i] = (unsigned char)t;
        metas[2 * i] = (unsigned char)(v & 0xFF);
        metas[2 * i + 1] = (unsigned char)(v >> 8);
    }
    return out;
}

/* what another buffer holds (nothing when it was never grown) */
static int put_out(Out *o, const Out *src) { return src->len ? put(o, src->buf, src->len) : 0; }

/* all of buf[:len] to fd, the GIL released (a pipe's reader may be slow); -1 with OSError set
   (EPIPE: BrokenPipeError, as a Python write raises it) */
static int write_all(int fd, const char *buf, Py_ssize_t len) {
    while (len > 0) {
        ssize_t n;
        Py_BEGIN_ALLOW_THREADS
        n = write(fd, buf, (size_t)len);
        Py_END_ALLOW_THREADS
        if (n < 0) {
            if (errno == EINTR) {
                if (PyErr_CheckSignals())
                    return -1;
                continue;
            }
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        buf += n;
        len -= n;
    }
    return 0;
}

/* Replay._flush_rows: a statement's headers, its BINLOG block, its `###` rows (-v) and rows count;
   0, -1 with an error set (no memory, or out_fd's write) */
static int r_flush(Replayer *R, Out *o, int opts) {
    if (R->has_annot && !R->head.len) { /* its rows were all filtered out */
        R->has_annot = 0;
        R->annot.len = 0;
    }
    if (!R->head.len && !R->body.len)
        return 0;
    if (put_out(o, &R->head))
        goto nomem;
    R->head.len = 0;
    if (!R->body.len) /* headers only */
        return 0;
    if (PUTS(o, "\nBINLOG '\n"))
        goto nomem;
    if (R->out_fd >= 0 && R->body.len + R->tail.len > R->direct_min) { /* the text before it, then its parts */
        if (write_all(R->out_fd, o->buf, o->len) || write_all(R->out_fd, R->body.buf, R->body.len))
            return -1;
        o->len = 0;
        if (PUTS(o, "\n'/*!*/;\n"))
            goto nomem;
        if (R->ntail) {
            if (write_all(R->out_fd, o->buf, o->len) || write_all(R->out_fd, R->tail.buf, R->tail.len))
                return -1;
            o->len = 0;
            if (PUTS(o, "\n"))
                goto nomem;
        }
    } else if (put_out(o, &R->body) || PUTS(o, "\n'/*!*/;\n") ||
               (R->ntail && (put_out(o, &R->tail) || PUTS(o, "\n")))) {
        goto nomem;
    }
    R->tail.len = 0;
    R->ntail = 0;
    if (opts & O_ROWCOUNT &&
        (PUTS(o, "# Number of rows: ") || put_u64(o, (uint64_t)R->rows) || PUTS(o, "\n")))
        goto nomem;
    R->body.len = 0;
    R->rows = 0;
    return 0;
nomem:
    PyErr_NoMemory();
    return -1;
}

/* Replay._skip_repl: `SET skip_replication=N` (in a versioned comment) when the event's flag differs */
static int r_skip_repl(Replayer *R, Out *o, const EventHeader *e, int opts) {
    if (!(opts & O_SKIPREPL))
        return 0;
    int cur = !!(e->flags & LOG_EVENT_SKIP_REPLICATION_F);
    if (cur == R->skip_replication)
        return 0;
    R->skip_replication = cur;
    return cur ? PUTS(o, "/*!50521 SET skip_replication=1*/;\n") : PUTS(o, "/*!50521 SET skip_replication=0*/;\n");
}

static int put_at(Out *o, long long at) { return PUTS(o, "# at ") || put_u64(o, (uint64_t)at) || PUTS(o, "\n"); }

/* a BEGIN or COMMIT Query whose context is the one printed last (Replay._query prints only
   `SET TIMESTAMP` and the statement then): 0 printed, 1 the Python path's, -1 error set */
/* Query status variable codes (codecs/status_vars.py: MySQL's statement_events.h
   enum_status_vars 0-20, MariaDB's log_event.h 128-131) */
enum {
    Q_FLAGS2_CODE = 0, Q_SQL_MODE_CODE = 1, Q_CATALOG_CODE = 2, Q_AUTO_INCREMENT = 3, Q_CHARSET_CODE = 4,
    Q_TIME_ZONE_CODE = 5, Q_CATALOG_NZ_CODE = 6, Q_LC_TIME_NAMES_CODE = 7, Q_CHARSET_DATABASE_CODE = 8,
    Q_TABLE_MAP_FOR_UPDATE_CODE = 9, Q_MICROSECONDS = 13, Q_COMMIT_TS = 14, Q_COMMIT_TS2 = 15,
    Q_DEFAULT_COLLATION_FOR_UTF8MB4 = 18, Q_HRNOW = 128, Q_XID = 129
};

static int r_query(Replayer *R, Out *o, Ctx *c, const EventHeader *e, const unsigned char *h,
                   const unsigned char *b, const unsigned char *end, long long at) {
    int opts = c->opts;
    Py_ssize_t n = end - b;
    if (c->cfg[256 + QUERY_EVENT] != 13 || n < 13 || R->gtid_flags2 & (0x40 | 0x80))
        return 1; /* not a plain v4 Query (codecs/fast.query), or inside an XA transaction */
    uint32_t thread_id = (uint32_t)le(b, 4), exec_time = (uint32_t)le(b + 4, 4);
    unsigned len_db = b[8], error_code = (unsigned)le(b + 9, 2), len_sv = (unsigned)le(b + 11, 2);
    const unsigned char *sv = b + 13, *svend = sv + len_sv;
    if (end - sv < (Py_ssize_t)len_sv + len_db + 1 || svend[len_db] != 0)
        return 1;
    const unsigned char *q = svend + len_db + 1;
    Py_ssize_t nq = end - q;
    int begin = nq == 5 && !memcmp(q, "BEGIN", 5);
    if (!begin && !(nq == 6 && !memcmp(q, "COMMIT", 6)))
        return 1;
    /* the status variables (codecs/status_vars.py), each compared with what was printed last */
    long long usec = -1, hrnow = -1, xid = 0, ai_inc = 1, ai_off = 1, lc = 0, cd = 0;
    for (const unsigned char *p = sv; p < svend;) {
        int code = *p++;
        Py_ssize_t left = svend - p, need;
        switch (code) {
        case Q_FLAGS2_CODE: /* flags2: printed when it changes */
            if (left < 4 || R->flags2 < 0 || (long long)le(p, 4) != R->flags2)
                return 1;
            need = 4;
            break;
        case Q_SQL_MODE_CODE: /* sql_mode */
            if (left < 8 || R->sql_mode < 0 || le(p, 8) != (uint64_t)R->sql_mode)
                return 1;
            need = 8;
            break;
        case Q_AUTO_INCREMENT: /* auto_increment */
            if (left < 4)
                return 1;
            ai_inc = (long long)le(p, 2), ai_off = (long long)le(p + 2, 2);
            need = 4;
            break;
        case Q_CHARSET_CODE: /* charset */
            if (left < 6 || (long long)le(p, 2) != R->charset_client || (long long)le(p + 2, 2) != R->collation_connection ||
                (long long)le(p + 4, 2) != R->collation_server)
                return 1;
            need = 6;
            break;
        case Q_TIME_ZONE_CODE: /* time_zone: printed when set and changed */
            if (left < 1 || left < 1 + p[0])
                return 1;
            if (p[0] && (p[0] != PyBytes_GET_SIZE(R->time_zone) || memcmp(p + 1, PyBytes_AS_STRING(R->time_zone), p[0])))
                return 1;
            need = 1 + p[0];
            break;
        case Q_CATALOG_NZ_CODE: /* catalog_nz: not printed */
            if (left < 1 || left < 1 + p[0])
                return 1;
            need = 1 + p[0];
            break;
        case Q_LC_TIME_NAMES_CODE:
            if (left < 2)
                return 1;
            lc = (long long)le(p, 2);
            need = 2;
            break;
        case Q_CHARSET_DATABASE_CODE:
            if (left < 2)
                return 1;
            cd = (long long)le(p, 2);
            need = 2;
            break;
        case Q_TABLE_MAP_FOR_UPDATE_CODE: /* table_map_for_update: not printed */
            need = 8;
            break;
        case Q_MICROSECONDS:
            if (left < 3)
                return 1;
            usec = (long long)le(p, 3);
            need = 3;
            break;
        default:
            if (opts & O_SV_MARIADB) {
                if (code == Q_HRNOW && left >= 3) { /* hrnow */
                    hrnow = (long long)le(p, 3);
                    need = 3;
                } else if (code == Q_XID && left >= 8) { /* xid */
                    xid = (long long)le(p, 8);
                    need = 8;
                } else
                    return 1; /* gtid_flags3, character_set_collations, unknown: Replay's */
            } else if (code == Q_COMMIT_TS || code == Q_COMMIT_TS2) { /* commit_ts, commit_ts2 */
                need = 8;
            } else if (code == Q_DEFAULT_COLLATION_FOR_UTF8MB4 && left >= 2) { /* default_collation_for_utf8mb4: printed when it changes */
                if ((long long)le(p, 2) != R->default_collation_for_utf8mb4)
                    return 1;
                need = 2;
            } else
                return 1; /* what mysqlbinlog prints with every Query (16, 19, 20), ddl xid (17), unknown */
        }
        if (left < need)
            return 1;
        p += need;
    }
    if (ai_inc != R->auto_increment_increment || ai_off != R->auto_increment_offset || lc != R->lc_time_names ||
        cd != R->charset_database || R->thread_id < 0 || (e->flags & LOG_EVENT_THREAD_SPECIFIC_F && thread_id != R->thread_id))
        return 1;
    if (hrnow >= 0)
        usec = hrnow;
    if (usec > 999999) /* `.%06d` of more than six digits: Replay's */
        return 1;
    if (r_flush(R, o, opts) || put_at(o, at) || r_skip_repl(R, o, e, opts) ||
        put_header(o, &c->stamp, e, h, opts & O_SHOW_CRC) || PUTS(o, "Query\tthread_id=") || put_u64(o, thread_id) ||
        PUTS(o, "\texec_time=") || put_u64(o, exec_time) || PUTS(o, "\terror_code=") || put_u64(o, error_code) ||
        (opts & O_SHOWS_XID && (PUTS(o, "\txid=") || put_u64(o, (uint64_t)xid))) || PUTS(o, "\nSET TIMESTAMP=") ||
        put_u64(o, e->ts))
        goto nomem;
    if (usec > 0) {
        char tmp[8];
        snprintf(tmp, sizeof tmp, ".%06lld", usec);
        if (put(o, tmp, 7))
            goto nomem;
    }
    if (PUTS(o, "/*!*/;\n") || put(o, (const char *)q, nq) || PUTS(o, "\n/*!*/;\n"))
        goto nomem;
    R->gtid_pending = 0;
    R->in_trx = begin;
    return 0;
nomem:
    if (!PyErr_Occurred()) /* r_flush sets its own (an OSError of out_fd) */
        PyErr_NoMemory();
    return -1;
}

/* Replay._rows with -v: the `###` rows of one rows event (rowvalues.verbose_text, by the shared
   _rowimage.h) added to the held tail, by the table's plan (Replayer.plans); the rows it holds, or
   -1: the Python path's (nothing taken; an error set only when memory is out) */
static long long r_rows_text(Replayer *R, int code, const Body *r, PyObject *plan) {
    PyObject *types, *metas, *name, *notes;
    int esc;
    if (!plan || !PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 5)
        return -1; /* not seen, or the table is not for C (hints, a column type C does not print) */
    types = PyTuple_GET_ITEM(plan, 0), metas = PyTuple_GET_ITEM(plan, 1), name = PyTuple_GET_ITEM(plan, 2);
    notes = PyTuple_GET_ITEM(plan, 3);
    esc = PyObject_IsTrue(PyTuple_GET_ITEM(plan, 4));
    if (!PyBytes_Check(types) || !PyBytes_Check(metas) || !PyBytes_Check(name) || esc < 0)
        return -1;
    Py_ssize_t ncols = PyBytes_GET_SIZE(types);
    if (PyBytes_GET_SIZE(metas) != 2 * ncols || (uint64_t)ncols != r->width)
        return -1;
    const Note *nt = NULL;
    Py_ssize_t nnotes = 0; /* a note per column, or (-vv) two: not NULL, then NULL */
    if (notes != Py_None) {
        if (!PyTuple_Check(notes) || (PyTuple_GET_SIZE(notes) != ncols && PyTuple_GET_SIZE(notes) != 2 * ncols))
            return -1;
        nnotes = PyTuple_GET_SIZE(notes);
        if (grow(&R->notes_buf, sizeof(Note) * (nnotes ? nnotes : 1)))
            return -1;
        Note *w = (Note *)R->notes_buf.buf;
        for (Py_ssize_t i = 0; i < nnotes; i++) {
            PyObject *item = PyTuple_GET_ITEM(notes, i);
            if (!PyBytes_Check(item))
                return -1;
            w[i].s = PyBytes_AS_STRING(item);
            w[i].n = PyBytes_GET_SIZE(item);
        }
        nt = w;
    }
    Py_ssize_t mark = R->tail.len;
    long long n;
    int kind = code == WRITE_ROWS_EVENT || code == WRITE_ROWS_EVENT_V1 ? 0 : is_update(code) ? 1 : 2;
    if ((R->ntail && PUTS(&R->tail, "\n")) ||
        rows_text_at(&R->tail, kind, (const unsigned char *)PyBytes_AS_STRING(types),
                     (const unsigned char *)PyBytes_AS_STRING(metas), ncols, r->before, r->after,
                     PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name), nt, esc, r->rows, r->rows + r->n_rows, &n,
                     nnotes == 2 * ncols && ncols ? ncols : 0)) {
        R->tail.len = mark;
        return -1;
    }
    while (R->tail.len > mark && R->tail.buf[R->tail.len - 1] == '\n') /* Replay._rows: text.rstrip("\n") */
        R->tail.len--;
    R->ntail++;
    return n;
}

/* one event as Replay.feed prints it: 0 printed, 1 the Python path's (nothing taken), -1 error set */
static int r_event(Replayer *R, Out *o, Ctx *c, const EventHeader *e, const unsigned char *h,
                   const unsigned char *b, const unsigned char *end, int ok, long long at) {
    int opts = c->opts, show_crc = opts & O_SHOW_CRC;
    Body r;
    if (ok != 1) /* only events whose CRC32 was checked good: damage is the Python path's to report */
        return 1;
    if (is_rows(e->code)) {
        if (!(opts & O_TABLES) || parse_rows(b, end, e->code, c->cfg[256 + e->code], &r))
            return 1;
        PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)r.table_id);
        if (!key)
            return -1;
        long long n = opts & O_VERBOSE ? r_rows_text(R, e->code, &r, PyDict_GetItemWithError(R->vtables, key))
                                       : count_rows(PyDict_GetItemWithError(R->tables, key), e->code, &r);
        Py_DECREF(key);
        if (PyErr_Occurred())
            return -1;
        if (n < 0)
            return 1;
        if (put_at(o, at) || put_header(&R->head, &c->stamp, e, h, show_crc) || put_rows_summary(&R->head, e->code, &r) ||
            (R->body.len && PUTS(&R->body, "\n")) || put_b64(&R->body, h, e->size))
            goto nomem;
        R->rows += n;
        if (r.flags & 1 && r_flush(R, o, opts)) /* STMT_END_F */
            goto nomem;
        return 0;
    }
    switch (e->code) {
    case QUERY_EVENT:
        return r_query(R, o, c, e, h, b, end, at);
    case TABLE_MAP_EVENT: {
        if (!(opts & O_TABLES) || parse_table_map(b, end, c->cfg[256 + TABLE_MAP_EVENT], &r))
            return 1;
        PyObject *cols = map_columns(&r);
        if (!cols)
            return PyErr_Occurred() ? -1 : 1;
        if (opts & O_VERBOSE) { /* its rows print by the Python decoder's reading of it: known yet? */
            PyObject *body = PyBytes_FromStringAndSize((const char *)b, end - b);
            PyObject *plan = body ? PyDict_GetItemWithError(R->plans, body) : NULL;
            PyObject *key = plan ? PyLong_FromUnsignedLongLong((unsigned long long)r.table_id) : NULL;
            int bad = key && PyDict_SetItem(R->vtables, key, plan);
            Py_XDECREF(body);
            Py_XDECREF(key);
            if (!plan || bad) {
                Py_DECREF(cols);
                return PyErr_Occurred() ? -1 : 1; /* a map not seen yet: the Python path reads it first */
            }
        }
        PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)r.table_id);
        PyObject *ev = Py_BuildValue("(y#L)", (const char *)h, (Py_ssize_t)e->size, at);
        int bad = !key || !ev || PyDict_SetItem(R->tables, key, cols) || PyDict_SetItem(R->maps, key, ev);
        Py_XDECREF(key);
        Py_XDECREF(ev);
        Py_DECREF(cols);
        if (bad)
            return -1;
        /* Replay._table_map: the held headers, the Annotate_rows' lines, its own header, the notes */
        if (put_at(o, at) || put_out(o, &R->head) || (R->has_annot && put_out(o, &R->annot)) ||
            put_header(o, &c->stamp, e, h, show_crc) || PUTS(o, "Table_map: `") ||
            put(o, (const char *)r.db, r.n_db) || PUTS(o, "`.`") || put(o, (const char *)r.table, r.n_table) ||
            PUTS(o, "` mapped to number ") || put_u64(o, r.table_id) || PUTS(o, "\n") ||
            put(o, PyBytes_AS_STRING(R->notes), PyBytes_GET_SIZE(R->notes)))
            goto nomem;
        R->head.len = R->annot.len = 0;
        R->has_annot = 0;
        if ((R->body.len && PUTS(&R->body, "\n")) || put_b64(&R->body, h, e->size))
            goto nomem;
        return 0;
    }
    case ANNOTATE_ROWS_EVENT: {
        if (!(opts & O_ANNOTATE))
            return 1;
        Py_ssize_t n = end - b;
        while (n && b[n - 1] == 0) /* the text as decoded: trailing NULs stripped */
            n--;
        for (Py_ssize_t i = 0; i < n; i++) /* ASCII: the text decoded as UTF-8 is these bytes */
            if (b[i] >= 0x80)
                return 1;
        R->annot.len = 0;
        if (put_header(&R->annot, &c->stamp, e, h, show_crc) || PUTS(&R->annot, "Annotate_rows:\n"))
            goto nomem;
        for (Py_ssize_t s = 0; s < n;) { /* replay._lines: runs of \r and \n end a line */
            while (s < n && (b[s] == '\n' || b[s] == '\r'))
                s++;
            Py_ssize_t j = s;
            while (j < n && b[j] != '\n' && b[j] != '\r')
                j++;
            if (j > s && (PUTS(&R->annot, "#Q> ") || put(&R->annot, (const char *)b + s, j - s) || PUTS(&R->annot, "\n")))
                goto nomem;
            s = j;
        }
        R->has_annot = 1;
        return put_at(o, at) ? -1 : 0;
    }
    case GTID_EVENT: { /* MariaDB (the config says which flavor's 162 this is) */
        Gtid g;
        if (!(opts & O_GTIDS) || parse_gtid(b, end, &g) || (g.extra < end && (g.extra[0] & 0x1E)))
            return 1; /* XA, two-phase ALTER, thread_id: the Python path's */
        unsigned f2 = g.flags2;
        int allow = !!(f2 & 8);
        if (r_flush(R, o, opts) || put_at(o, at) || r_skip_repl(R, o, e, opts) ||
            put_header(o, &c->stamp, e, h, show_crc) || PUTS(o, "GTID ") || put_u64(o, g.domain) || PUTS(o, "-") ||
            put_u64(o, e->sid) || PUTS(o, "-") || put_u64(o, g.seq) ||
            (f2 & 2 && (PUTS(o, " cid=") || put_u64(o, g.commit_id))) ||
            (f2 & 32 ? PUTS(o, " ddl") : f2 & 4 ? PUTS(o, " trans") : 0) || PUTS(o, "\n"))
            goto nomem;
        if (R->allow_parallel != allow) {
            if (allow ? PUTS(o, "/*M!100101 SET @@session.skip_parallel_replication=0*//*!*/;\n")
                      : PUTS(o, "/*M!100101 SET @@session.skip_parallel_replication=1*//*!*/;\n"))
                goto nomem;
            R->allow_parallel = allow;
        }
        if (R->domain_id != (long long)g.domain) {
            if (PUTS(o, "/*M!100001 SET @@session.gtid_domain_id=") || put_u64(o, g.domain) || PUTS(o, "*//*!*/;\n"))
                goto nomem;
            R->domain_id = g.domain;
        }
        if (R->server_id != (long long)e->sid) {
            if (PUTS(o, "/*M!100001 SET @@session.server_id=") || put_u64(o, e->sid) || PUTS(o, "*//*!*/;\n"))
                goto nomem;
            R->server_id = e->sid;
        }
        if (PUTS(o, "/*M!100001 SET @@session.gtid_seq_no=") || put_u64(o, g.seq) || PUTS(o, "*//*!*/;\n") ||
            (!(f2 & 1) && PUTS(o, "START TRANSACTION\n/*!*/;\n")))
            goto nomem;
        R->gtid_flags2 = (int)f2;
        R->in_trx = !(f2 & 1);
        return 0;
    }
    case XID_EVENT:
        if (end - b != 8)
            return 1;
        if (r_flush(R, o, opts) || put_at(o, at) || r_skip_repl(R, o, e, opts) ||
            put_header(o, &c->stamp, e, h, show_crc) || PUTS(o, "Xid = ") || put_u64(o, le(b, 8)) ||
            PUTS(o, "\nCOMMIT/*!*/;\n"))
            goto nomem;
        R->in_trx = R->gtid_pending = 0;
        return 0;
    default:
        return 1;
    }
nomem:
    if (!PyErr_Occurred()) /* r_flush sets its own (an OSError of out_fd) */
        PyErr_NoMemory();
    return -1;
}

static PyObject *replayer_walk(Replayer *R, PyObject *args) {
    Py_buffer buf, cfg;
    Py_ssize_t rel, filled;
    long long at;
    PyObject *crc;
    Ctx c;
    if (!PyArg_ParseTuple(args, "y*nnLiOy*", &buf, &rel, &filled, &at, &c.opts, &crc, &cfg))
        return NULL;
    PyObject *result = NULL, *info = NULL;
    Out o = R->text;
    o.len = 0;
    int status = MORE, first = 1;
    c.cfg = cfg.buf;
    c.names = NULL;
    c.stamp.ts = -1;
    c.stamp.local = !(c.opts & O_UTC);
    if (cfg.len != 512 || rel < 0 || filled > buf.len || rel > filled || !PyBytes_Check(R->notes) ||
        !PyBytes_Check(R->time_zone)) {
        PyErr_SetString(PyExc_ValueError, "Replayer.walk: bad arguments");
        goto done;
    }
    const unsigned char *base = buf.buf;
    for (;; first = 0) {
        EventHeader e;
        int ok;
        if ((status = next_event(base + rel, filled - rel, at, c.opts, crc, &e, &ok, &info)) != STOP_NONE)
            break;
        const unsigned char *h = base + rel;
        const unsigned char *b = h + LEN_HEADER, *end = h + e.size - (c.opts & O_SHOW_CRC ? 4 : 0);
        int res = 1;
        Py_ssize_t mark = o.len;
        if (!(first && c.opts & O_FIRST_PY) && c.cfg[e.code] && end >= b)
            res = r_event(R, &o, &c, &e, h, b, end, ok, at);
        if (res < 0)
            goto done;
        if (res > 0) {
            o.len = mark;
            status = PYTHON;
            info = header_info(&e, ok);
            break;
        }
        rel += e.size;
        at += e.size;
        if (o.len > OUT_LIMIT) {
            status = FULL;
            break;
        }
    }
    if (status == STOP_ERROR || (status == PYTHON && !info))
        goto done;
    if (R->out_fd >= 0 && o.len > 0) {
        if (write_all(R->out_fd, o.buf, o.len))
            goto done;
        o.len = 0;
    }
    result = Py_BuildValue("(inLy#O)", status, rel, at, o.buf ? o.buf : "", o.len, info ? info : Py_None);
done:
    Py_XDECREF(info);
    R->text = o; /* its buffer, grown or not, for the next call */
    PyBuffer_Release(&buf);
    PyBuffer_Release(&cfg);
    return result;
}

/* the held statement, given back to Replay (Replay.settle) and cleared here */
static PyObject *replayer_take(Replayer *R, PyObject *Py_UNUSED(ignored)) {
    PyObject *annot = R->has_annot ? PyBytes_FromStringAndSize(R->annot.buf ? R->annot.buf : "", R->annot.len)
                                   : Py_NewRef(Py_None);
    if (!annot)
        return NULL;
    PyObject *tail = R->ntail ? PyBytes_FromStringAndSize(R->tail.buf ? R->tail.buf : "", R->tail.len)
                              : Py_NewRef(Py_None);
    if (!tail) {
        Py_DECREF(annot);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(y#y#NN)", R->head.buf ? R->head.buf : "", R->head.len, R->body.buf ? R->body.buf : "",
                                  R->body.len, annot, tail);
    if (out) {
        R->head.len = R->body.len = R->annot.len = R->tail.len = 0;
        R->has_annot = 0;
        R->ntail = 0;
    }
    return out;
}

static PyObject *replayer_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if (!PyArg_ParseTuple(args, ":Replayer") || (kw && PyDict_GET_SIZE(kw))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "Replayer() takes no arguments");
        return NULL;
    }
    Replayer *R = (Replayer *)type->tp_alloc(type, 0);
    if (!R)
        return NULL;
    R->allow_parallel = R->domain_id = R->server_id = -1;
    R->out_fd = -1;
    R->direct_min = 1 << 18; /* below it, one copy into the text costs less than the writes */
    R->thread_id = R->flags2 = R->sql_mode = R->charset_client = R->collation_connection = R->collation_server = -1;
    R->lc_time_names = R->charset_database = R->default_collation_for_utf8mb4 = -1;
    R->time_zone = PyBytes_FromStringAndSize("", 0);
    R->tables = PyDict_New();
    R->maps = PyDict_New();
    R->notes = PyBytes_FromStringAndSize("", 0);
    R->plans = PyDict_New();
    R->vtables = PyDict_New();
    if (!R->tables || !R->maps || !R->notes || !R->time_zone || !R->plans || !R->vtables) {
        Py_DECREF(R);
        return NULL;
    }
    return (PyObject *)R;
}

static void replayer_dealloc(Replayer *R) {
    PyMem_Free(R->text.buf);
    PyMem_Free(R->head.buf);
    PyMem_Free(R->body.buf);
    PyMem_Free(R->annot.buf);
    PyMem_Free(R->tail.buf);
    PyMem_Free(R->notes_buf.buf);
    Py_XDECREF(R->plans);
    Py_XDECREF(R->vtables);
    Py_XDECREF(R->tables);
    Py_XDECREF(R->maps);
    Py_XDECREF(R->notes);
    Py_XDECREF(R->time_zone);
    Py_TYPE(R)->tp_free((PyObject *)R);
}

static PyMemberDef replayer_members[] = {
    {"rows", T_LONGLONG, offsetof(Replayer, rows), 0, "rows of the held statement"},
    {"allow_parallel", T_LONGLONG, offsetof(Replayer, allow_parallel), 0, "Session.allow_parallel (-1: None)"},
    {"domain_id", T_LONGLONG, offsetof(Replayer, domain_id), 0, "Session.domain_id (-1: None)"},
    {"server_id", T_LONGLONG, offsetof(Replayer, server_id), 0, "Session.server_id (-1: None)"},
    {"skip_replication", T_INT, offsetof(Replayer, skip_replication), 0, "Session.skip_replication"},
    {"gtid_flags2", T_INT, offsetof(Replayer, gtid_flags2), 0, "Session.gtid_flags2"},
    {"in_trx", T_INT, offsetof(Replayer, in_trx), 0, "Replay.in_trx"},
    {"gtid_pending", T_INT, offsetof(Replayer, gtid_pending), 0, "Replay.gtid_pending"},
    {"thread_id", T_LONGLONG, offsetof(Replayer, thread_id), 0, "Session.thread_id (-1: None)"},
    {"flags2", T_LONGLONG, offsetof(Replayer, flags2), 0, "Session.flags2 (-1: None)"},
    {"sql_mode", T_LONGLONG, offsetof(Replayer, sql_mode), 0, "Session.sql_mode (-1: None)"},
    {"auto_increment_increment", T_LONGLONG, offsetof(Replayer, auto_increment_increment), 0, "Session.auto_increment[0]"},
    {"auto_increment_offset", T_LONGLONG, offsetof(Replayer, auto_increment_offset), 0, "Session.auto_increment[1]"},
    {"charset_client", T_LONGLONG, offsetof(Replayer, charset_client), 0, "Session.charset[0] (-1: None)"},
    {"collation_connection", T_LONGLONG, offsetof(Replayer, collation_connection), 0, "Session.charset[1]"},
    {"collation_server", T_LONGLONG, offsetof(Replayer, collation_server), 0, "Session.charset[2]"},
    {"lc_time_names", T_LONGLONG, offsetof(Replayer, lc_time_names), 0, "Session.lc_time_names"},
    {"charset_database", T_LONGLONG, offsetof(Replayer, charset_database), 0, "Session.charset_database"},
    {"default_collation_for_utf8mb4", T_LONGLONG, offsetof(Replayer, default_collation_for_utf8mb4), 0,
     "Session.default_collation_for_utf8mb4 (-1: None)"},
    {"time_zone", T_OBJECT_EX, offsetof(Replayer, time_zone), 0, "Session.time_zone (bytes)"},
    {"tables", T_OBJECT_EX, offsetof(Replayer, tables), READONLY, "table id -> column types + 2-byte metadata"},
    {"maps", T_OBJECT_EX, offsetof(Replayer, maps), READONLY, "table id -> (Table_map bytes, offset) printed here"},
    {"notes", T_OBJECT_EX, offsetof(Replayer, notes), 0, "lines under a Table_map's header (bytes)"},
    {"plans", T_OBJECT_EX, offsetof(Replayer, plans), READONLY,
     "Table_map body -> (types, metas, name, notes | None, escape) or None: how its rows print with -v"},
    {"vtables", T_OBJECT_EX, offsetof(Replayer, vtables), READONLY, "table id -> plan, for the maps printed here"},
    {"out_fd", T_INT, offsetof(Replayer, out_fd), 0,
     "-1 (walk returns its text), or a descriptor walk writes its text to (then returns b\"\")"},
    {"direct_min", T_PYSSIZET, offsetof(Replayer, direct_min), 0,
     "with out_fd: a statement whose base64 and rows exceed this many bytes is written from where it is held"},
    {NULL, 0, 0, 0, NULL}};

static PyMethodDef replayer_methods[] = {
    {"walk", (PyCFunction)replayer_walk, METH_VARARGS,
     "walk(buf, rel, filled, at, opts, crc, cfg) -> (status, rel, at, text, info)\n\n"
     "Frame, check and print the events of buf[rel:filled] as decoding.replay.Replay prints them, until\n"
     "one is not for this loop (PYTHON: info = (code, timestamp, server_id, size, log_pos, flags,\n"
     "checksum_ok)), the window ends (MORE), framing is irregular (HANDOVER) or 1 MiB of text is\n"
     "ready (FULL). A statement's row events stay held here across calls (take()). With out_fd set,\n"
     "the text is written there before walk returns, and text is b\"\"."},
    {"take", (PyCFunction)replayer_take, METH_NOARGS,
     "take() -> (head, body, annotate, tail): the held statement's header lines, base64 blocks,\n"
     "Annotate_rows lines (None: none held) and `###` rows (-v; None: none held), cleared here."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ReplayerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "binlogkit._fastdecode.Replayer",
    .tp_basicsize = sizeof(Replayer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The replayable printer's state the C loop keeps (see binlogkit/reading/fastdecode.py).",
    .tp_new = replayer_new,
    .tp_dealloc = (destructor)replayer_dealloc,
    .tp_members = replayer_members,
    .tp_methods = replayer_methods,
};

/* b64(data, simd) -> bytes: put_b64 on its own, for the tests (with and without the SIMD lines) */
static PyObject *b64_py(PyObject *self, PyObject *args) {
    Py_buffer data;
    int simd = 1;
    if (!PyArg_ParseTuple(args, "y*|p", &data, &simd))
        return NULL;
    Out o = {NULL, 0, 0};
    PyObject *out = NULL;
#ifdef B64_SIMD
    int had = b64_ssse3;
    b64_ssse3 = had && simd;
#endif
    if (put_b64(&o, data.buf, data.len))
        PyErr_NoMemory();
    else
        out = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
#ifdef B64_SIMD
    b64_ssse3 = had;
#endif
    PyMem_Free(o.buf);
    PyBuffer_Release(&data);
    return out;
}

static PyMethodDef methods[] = {
    {"b64", b64_py, METH_VARARGS,
     "b64(data, simd=True) -> bytes: a BINLOG block's base64 (76-character lines), for the tests."},
    {"walk", walk, METH_VARARGS,
     "walk(buf, rel, filled, at, opts, crc, cfg, names, prefix) ->\n"
     "    (status, rel, filled, at, text, info, events, checksummed)\n\n"
     "Frame, check and render the events of buf[rel:filled] (the file from offset `at`) until one\n"
     "is not for this loop (status PYTHON: info = (code, timestamp, server_id, size, log_pos,\n"
     "flags, checksum_ok)), the window ends (MORE), framing is irregular (HANDOVER), a table map\n"
     "or rows event was rendered with opts VERBOSE (TABLEMAP / ROWS: info = (code, table_id,\n"
     "body_start, body_end, mark)) or 1 MiB of text is ready (FULL). Replayable text: Replayer.walk.\n"
     "See binlogkit/reading/fastdecode.py."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastdecode",
                                    "C accelerator for the decode / verify loop (optional).", -1, methods};

PyMODINIT_FUNC PyInit__fastdecode(void) {
    b64_init();
    if (PyType_Ready(&ReplayerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObjectRef(m, "Replayer", (PyObject *)&ReplayerType) < 0)
        Py_CLEAR(m);
    return m;
}
