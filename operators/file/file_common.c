/* Helpers shared by the file operators: XXH64, file mappings, column lists, ordered
 * sink pieces and atomic file replacement (see file_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_int.h"

/* ---------------- XXH64 ----------------
 * The 64-bit xxHash by Yann Collet, seed 0, written from its public specification:
 * four lanes of (acc + word * P2) rotl 31 * P1 over 32-byte stripes, merged, then the
 * tail and an avalanche. About one multiply per 8 bytes per lane, so it runs at memory
 * speed; it detects any single flipped bit or byte and torn or truncated writes, which
 * is what the file format needs (it is not a cryptographic hash). */

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t read64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8); /* little-endian hosts only: see docs/FILE_FORMAT.md */
    return v;
}

static inline uint64_t read32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t xround(uint64_t acc, uint64_t in)
{
    acc += in * P2;
    return rotl64(acc, 31) * P1;
}

static inline uint64_t xmerge(uint64_t acc, uint64_t v)
{
    acc ^= xround(0, v);
    return acc * P1 + P4;
}

void sl__xxh64_init(struct sl__xxh64 *s)
{
    memset(s, 0, sizeof *s);
    s->v[0] = P1 + P2;
    s->v[1] = P2;
    s->v[2] = 0;
    s->v[3] = (uint64_t)0 - P1;
}

static void stripes(struct sl__xxh64 *s, const uint8_t *p, size_t n_stripes)
{
    uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2], v3 = s->v[3];
    for (size_t i = 0; i < n_stripes; i++, p += 32) {
        v0 = xround(v0, read64(p));
        v1 = xround(v1, read64(p + 8));
        v2 = xround(v2, read64(p + 16));
        v3 = xround(v3, read64(p + 24));
    }
    s->v[0] = v0;
    s->v[1] = v1;
    s->v[2] = v2;
    s->v[3] = v3;
}

void sl__xxh64_update(struct sl__xxh64 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (len == 0)
        return; /* data may be NULL then */
    s->total += len;
    if (s->n_buf) {
        size_t take = 32 - s->n_buf < len ? 32 - s->n_buf : len;
        memcpy(s->buf + s->n_buf, p, take);
        s->n_buf += (unsigned)take;
        p += take;
        len -= take;
        if (s->n_buf < 32)
            return;
        stripes(s, s->buf, 1);
        s->n_buf = 0;
    }
    stripes(s, p, len / 32);
    p += len / 32 * 32;
    len %= 32;
    if (len) /* p may be NULL for an empty section: memcpy(NULL, 0) is undefined */
        memcpy(s->buf, p, len);
    s->n_buf = (unsigned)len;
}

uint64_t sl__xxh64_final(const struct sl__xxh64 *s)
{
    uint64_t h;
    if (s->total >= 32) {
        h = rotl64(s->v[0], 1) + rotl64(s->v[1], 7) + rotl64(s->v[2], 12) + rotl64(s->v[3], 18);
        for (int i = 0; i < 4; i++)
            h = xmerge(h, s->v[i]);
    } else {
        h = s->v[2] + P5; /* v[2] holds the seed */
    }
    h += s->total;
    const uint8_t *p = s->buf;
    size_t len = s->n_buf;
    for (; len >= 8; len -= 8, p += 8) {
        h ^= xround(0, read64(p));
        h = rotl64(h, 27) * P1 + P4;
    }
    if (len >= 4) {
        h ^= read32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
        len -= 4;
    }
    for (; len > 0; len--, p++) {
        h ^= *p * P5;
        h = rotl64(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

uint64_t sl__xxh64(const void *data, size_t len)
{
    struct sl__xxh64 s;
    sl__xxh64_init(&s);
    sl__xxh64_update(&s, data, len);
    return sl__xxh64_final(&s);
}

/* ---------------- file mappings ---------------- */

static void not_regular(const char *path, const struct stat *st, char *err, size_t err_len)
{
    snprintf(err, err_len, "cannot read '%s': not a regular file (%s)", path,
             S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a FIFO"
             : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device" : "a special file");
}

int sl__path_not_special(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        not_regular(path, &st, err, err_len);
        return SL_EIO;
    }
    return SL_OK;
}

/* Reads [0, bytes) with pread into m->base; a file that shrank is an error. */
static int fmap_read(int fd, struct sl__fmap *m, const char *path, char *err, size_t err_len)
{
    void *p = sl__mem_fault_now() ? MAP_FAILED
              : mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(err, err_len, "cannot read '%s': no memory for its %zu bytes", path, m->bytes);
        return SL_ENOMEM;
    }
    m->base = p;
    for (size_t off = 0; off < m->bytes;) {
        size_t step = m->bytes - off < (64u << 20) ? m->bytes - off : (64u << 20);
        ssize_t k = sl__io_pread(fd, (uint8_t *)p + off, step, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            snprintf(err, err_len, "cannot read '%s': %s", path, strerror(errno));
            return SL_EIO;
        }
        if (k == 0) {
            snprintf(err, err_len, "cannot read '%s': it shrank from %zu to %zu bytes while "
                     "being read", path, m->bytes, off);
            return SL_EIO;
        }
        off += (size_t)k;
    }
    mprotect(p, m->bytes, PROT_READ); /* batches point into it: read-only from now on */
    return SL_OK;
}

int sl__fmap_open(const char *path, uint64_t limit, struct sl__fmap **out, char *err,
                  size_t err_len)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO with no writer would block; a FIFO or device is refused
     * by the fstat below before any read. */
    int fd = sl__io_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, err_len, "cannot open '%s': %s", path, strerror(errno));
        return SL_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, err_len, "cannot stat '%s': %s", path, strerror(errno));
        close(fd);
        return SL_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        not_regular(path, &st, err, err_len);
        close(fd);
        return SL_EIO;
    }
    struct sl__fmap *m = sl__calloc(1, sizeof *m);
    if (!m) {
        close(fd);
        snprintf(err, err_len, "out of memory");
        return SL_ENOMEM;
    }
    atomic_init(&m->refs, 1);
    m->file_bytes = (uint64_t)st.st_size;
    m->bytes = (size_t)(m->file_bytes < limit ? m->file_bytes : limit);
    int rc = m->bytes ? fmap_read(fd, m, path, err, err_len) : SL_OK;
    close(fd);
    if (rc < 0) {
        sl__fmap_unref(m);
        return rc;
    }
    *out = m;
    return SL_OK;
}

void sl__fmap_unref(struct sl__fmap *m)
{
    if (!m)
        return;
    /* acq_rel: the last owner unmaps after every reader's loads. */
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (m->base)
        munmap((void *)m->base, m->bytes);
    sl__free(m, sizeof *m);
}

static void fmap_buf_release(struct sl__buf *b)
{
    sl__fmap_unref(b->owner);
}

struct sl__buf *sl__fmap_buf(struct sl__fmap *m, size_t off, size_t bytes)
{
    struct sl__buf *b = sl__buf_wrap((void *)(m->base ? m->base + off : NULL), (int64_t)bytes,
                                     SL__MEM_FOREIGN, fmap_buf_release, m);
    if (b)
        atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return b;
}

/* ---------------- column lists ---------------- */

static char *dup_n(const char *s, size_t n)
{
    char *d = sl__malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void sl__collist_free(struct sl__collist *l)
{
    for (int i = 0; i < l->n; i++)
        sl__free_str(l->names[i]);
    sl__free(l->names, 0);
    sl__free(l->types, 0);
    memset(l, 0, sizeof *l);
}

int sl__collist_parse(const char *text, int with_types, struct sl__collist *out, char *err,
                      size_t err_len)
{
    memset(out, 0, sizeof *out);
    int cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    out->names = sl__calloc((size_t)cap, sizeof *out->names);
    out->types = sl__calloc((size_t)cap, sizeof *out->types);
    if (!out->names || !out->types)
        goto nomem;
    const char *p = text;
    for (int item = 1;; item++) {
        /* The item ends at a comma outside parentheses ("p decimal(15,2), q int32"). */
        const char *end = p;
        for (int depth = 0; *end && (*end != ',' || depth > 0); end++)
            depth += (*end == '(') - (*end == ')');
        while (p < end && is_space(*p))
            p++;
        const char *q = end;
        while (q > p && is_space(q[-1]))
            q--;
        const char *name_end = p;
        while (name_end < q && !is_space(*name_end) && *name_end != ':')
            name_end++;
        if (name_end == p) {
            snprintf(err, err_len, "item %d of \"%s\" is empty", item, text);
            goto fail;
        }
        if (with_types) {
            const char *t = name_end;
            while (t < q && is_space(*t))
                t++;
            if (t < q && *t == ':') /* "name:type" as well as "name type" */
                for (t++; t < q && is_space(*t); t++)
                    ;
            char tname[32];
            size_t tl = (size_t)(q - t);
            if (tl == 0 || tl >= sizeof tname) {
                snprintf(err, err_len, "item %d of \"%s\" needs \"name type\" or "
                         "\"name:type\" (a type name of docs/TYPES.md)", item, text);
                goto fail;
            }
            memcpy(tname, t, tl);
            tname[tl] = 0;
            if (sl_type_parse(tname, &out->types[out->n]) < 0) {
                snprintf(err, err_len, "item %d of \"%s\": %s", item, text, sl_last_errmsg());
                goto fail;
            }
        } else if (name_end != q) {
            snprintf(err, err_len, "item %d of \"%s\": a column name has no spaces", item, text);
            goto fail;
        }
        char *name = dup_n(p, (size_t)(name_end - p));
        if (!name)
            goto nomem;
        for (int i = 0; i < out->n; i++) {
            if (strcmp(out->names[i], name) == 0) {
                snprintf(err, err_len, "column '%s' is listed twice in \"%s\"", name, text);
                sl__free_str(name);
                goto fail;
            }
        }
        out->names[out->n++] = name;
        if (!*end)
            break;
        p = end + 1;
    }
    return SL_OK;
nomem:
    snprintf(err, err_len, "out of memory");
    sl__collist_free(out);
    return SL_ENOMEM;
fail:
    sl__collist_free(out);
    return SL_EINVAL;
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_make(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t sl__c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_make);
    return c_locale;
}

locale_t sl__c_locale_begin(void)
{
    pthread_once(&c_locale_once, c_locale_make);
    return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void sl__c_locale_end(locale_t prev)
{
    if (prev)
        uselocale(prev);
}

int sl__parse_delimiter(const char *text)
{
    if (strcmp(text, "\\t") == 0 || strcmp(text, "tab") == 0)
        return '\t';
    if (strlen(text) != 1 || text[0] == '"' || text[0] == '\n' || text[0] == '\r')
        return -1;
    return (unsigned char)text[0];
}

/* ---------------- ordered pieces ---------------- */

int sl__pieces_push(struct sl__pieces *p, int64_t task, void *ptr, size_t bytes)
{
    if (p->n == p->cap) {
        int64_t nc = p->cap ? p->cap * 2 : 16;
        struct sl__piece *nv = sl__realloc(p->v, (size_t)p->cap * sizeof *nv,
                                           (size_t)nc * sizeof *nv);
        if (!nv)
            return SL_ENOMEM;
        p->v = nv;
        p->cap = nc;
    }
    /* A task runs start to end on one worker, so a change of task index on this worker
     * starts a new sequence. */
    if (p->n == 0 || task != p->last_task) {
        p->last_task = task;
        p->next_seq = 0;
    }
    p->v[p->n++] = (struct sl__piece){task, p->next_seq++, ptr, bytes};
    return SL_OK;
}

int sl__pieces_move(struct sl__pieces *dst, struct sl__pieces *src)
{
    for (int64_t i = 0; i < src->n; i++) {
        if (dst->n == dst->cap) {
            int64_t nc = dst->cap ? dst->cap * 2 : 16;
            if (nc < dst->n + src->n - i)
                nc = dst->n + src->n - i;
            struct sl__piece *nv = sl__realloc(dst->v, (size_t)dst->cap * sizeof *nv,
                                               (size_t)nc * sizeof *nv);
            if (!nv)
                return SL_ENOMEM;
            dst->v = nv;
            dst->cap = nc;
        }
        dst->v[dst->n++] = src->v[i];
    }
    src->n = 0;
    return SL_OK;
}

static int piece_cmp(const void *a, const void *b)
{
    const struct sl__piece *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void sl__pieces_sort(struct sl__pieces *p)
{
    if (p->n > 1)
        qsort(p->v, (size_t)p->n, sizeof *p->v, piece_cmp);
}

void sl__pieces_free(struct sl__pieces *p, void (*free_fn)(void *ptr, size_t bytes))
{
    if (free_fn) {
        for (int64_t i = 0; i < p->n; i++)
            free_fn(p->v[i].ptr, p->v[i].bytes);
    }
    sl__free(p->v, (size_t)p->cap * sizeof *p->v);
    memset(p, 0, sizeof *p);
}

/* ---------------- output files ---------------- */

#define WBUF_BYTES (1u << 20)

int sl__wfile_open(struct sl__wfile *w, const char *path, const sl_task_t *task, char *err,
                   size_t err_len)
{
    memset(w, 0, sizeof *w);
    w->out.fd = -1;
    w->task = task;
    if (!(w->buf = sl__malloc(WBUF_BYTES))) {
        snprintf(err, err_len, "out of memory");
        return SL_ENOMEM;
    }
    int rc = sl__out_file_open(&w->out, path, err, err_len);
    if (rc < 0)
        sl__wfile_abort(w);
    return rc;
}

static int write_all(struct sl__wfile *w, const uint8_t *p, size_t len, char *err,
                     size_t err_len)
{
    while (len) {
        /* Checked between writes: a cancel (SIGINT in the CLI) ends a long write soon. */
        if (w->task && sl_task_cancelled(w->task)) {
            snprintf(err, err_len, "cancelled");
            return SL_ECANCELED;
        }
        size_t step = len < WBUF_BYTES ? len : WBUF_BYTES;
        ssize_t k = sl__out_file_write(&w->out, p, step);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            snprintf(err, err_len, "cannot write '%s': %s", w->out.path,
                     strerror(k < 0 ? errno : EIO));
            return SL_EIO;
        }
        p += k;
        len -= (size_t)k;
    }
    return SL_OK;
}

static int wflush(struct sl__wfile *w, char *err, size_t err_len)
{
    int rc = write_all(w, w->buf, w->n_buf, err, err_len);
    w->n_buf = 0;
    return rc;
}

int sl__wfile_write(struct sl__wfile *w, const void *data, size_t len, char *err, size_t err_len)
{
    const uint8_t *p = data;
    w->off += len;
    if (w->dry)
        return SL_OK;
    if (w->n_buf + len <= WBUF_BYTES) {
        memcpy(w->buf + w->n_buf, p, len);
        w->n_buf += len;
        return SL_OK;
    }
    int rc = wflush(w, err, err_len);
    if (rc != SL_OK)
        return rc;
    if (len >= WBUF_BYTES)
        return write_all(w, p, len, err, err_len);
    memcpy(w->buf, p, len);
    w->n_buf = len;
    return SL_OK;
}

int sl__wfile_pad64(struct sl__wfile *w, char *err, size_t err_len)
{
    static const uint8_t zeros[SL__SLCF_ALIGN];
    size_t pad = (size_t)(sl__align64(w->off) - w->off);
    return pad ? sl__wfile_write(w, zeros, pad, err, err_len) : SL_OK;
}

int sl__wfile_pwrite(struct sl__wfile *w, const void *data, size_t len, uint64_t off, char *err,
                     size_t err_len)
{
    int rc = wflush(w, err, err_len);
    if (rc != SL_OK)
        return rc;
    const uint8_t *p = data;
    while (len) {
        ssize_t k = sl__io_pwrite(w->out.fd, p, len, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            snprintf(err, err_len, "cannot write '%s': %s", w->out.path,
                     strerror(k < 0 ? errno : EIO));
            return SL_EIO;
        }
        p += k;
        len -= (size_t)k;
        off += (uint64_t)k;
    }
    return SL_OK;
}

int sl__wfile_commit(struct sl__wfile *w, char *err, size_t err_len)
{
    int rc = wflush(w, err, err_len);
    if (rc == SL_OK)
        rc = sl__out_file_commit(&w->out, err, err_len);
    sl__wfile_abort(w); /* frees the rest; removes the temporary file after a failure */
    return rc;
}

void sl__wfile_abort(struct sl__wfile *w)
{
    sl__out_file_abort(&w->out);
    if (w->buf)
        sl__free(w->buf, WBUF_BYTES);
    w->buf = NULL;
}
