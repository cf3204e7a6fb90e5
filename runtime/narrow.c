/* Narrow copies of table columns (struct sl__narrow, internal.h; docs/TPCH.md, "Narrow
 * uploads"): a fixed-width integer column's values as unsigned offsets from their minimum,
 * in steps of their common divisor, in 1, 2, 3 or 4 bytes, made by sl_table_pin beside the
 * column's own buffer, so that a GPU upload moves the narrow bytes over the link and
 * widens them there. Exact: the width comes from the column's actual minimum, maximum and
 * step (every slot, null rows' included), and a column whose range needs its full width
 * gets no copy. */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

int sl__narrow_wide_width(enum sl_type type)
{
    switch (SL_TYPE_ID(type)) {
    case SL_TYPE_INT16:
    case SL_TYPE_UINT16:
    case SL_TYPE_INT32:
    case SL_TYPE_UINT32:
    case SL_TYPE_INT64:
    case SL_TYPE_UINT64:
    case SL_TYPE_DATE32:
    case SL_TYPE_TIMESTAMP:
    case SL_TYPE_DICT:
        return (int)sl__col_value_width(type);
    case SL_TYPE_DECIMAL: /* 64-bit decimals only: 128-bit ones stay as they are */
        return sl__col_value_width(type) == 8 ? 8 : 0;
    default: /* floats (their bits do not narrow), bools and 8-bit integers, strings */
        return 0;
    }
}

/* Value i of a wide array as a signed 64-bit integer. */
static inline int64_t wide_get(const void *p, int wide, int64_t i)
{
    switch (wide) {
    case 2: return ((const int16_t *)p)[i];
    case 4: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

/* Greatest common divisor (Euclid); gcd(0, b) = b. */
static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

int sl__narrow_plan(const void *values, int wide, int64_t n, int64_t *base, uint64_t *step)
{
    *base = 0;
    *step = 1;
    if (n <= 0 || (wide != 2 && wide != 4 && wide != 8))
        return 0;
    int64_t lo, hi;
    /* One loop per width, so that the compiler vectorizes each. */
#define MINMAX(T)                                                                          \
    do {                                                                                   \
        const T *v = values;                                                               \
        T l = v[0], h = v[0];                                                              \
        for (int64_t i = 1; i < n; i++) {                                                  \
            l = v[i] < l ? v[i] : l;                                                       \
            h = v[i] > h ? v[i] : h;                                                       \
        }                                                                                  \
        lo = l, hi = h;                                                                    \
    } while (0)
    if (wide == 8)
        MINMAX(int64_t);
    else if (wide == 4)
        MINMAX(int32_t);
    else
        MINMAX(int16_t);
#undef MINMAX
    uint64_t range = (uint64_t)hi - (uint64_t)lo; /* hi >= lo: exact in 64 bits */
    /* The values' common step above the minimum (a decimal's whole units: l_quantity is
     * 1.00 .. 50.00, 100 apart as integers); most columns reach 1 within a few values. */
    uint64_t g = 0;
    for (int64_t i = 0; i < n && g != 1; i++) {
        uint64_t d = (uint64_t)wide_get(values, wide, i) - (uint64_t)lo;
        if (g == 0 || d % g != 0)
            g = gcd64(g, d);
    }
    if (g > 1)
        range /= g;
    int width = range <= UINT8_MAX ? 1 : range <= UINT16_MAX ? 2 : range < (1u << 24) ? 3
              : range <= UINT32_MAX ? 4 : 8;
    if (width >= wide)
        return 0;
    *base = lo;
    *step = g > 1 ? g : 1;
    return width;
}

/* Narrow value i as an unsigned offset (3 bytes: little endian). */
static inline uint64_t narrow_get(const void *p, int width, int64_t i)
{
    const uint8_t *b = p;
    switch (width) {
    case 1: return b[i];
    case 2: return ((const uint16_t *)p)[i];
    case 3: return b[3 * i] | (uint64_t)b[3 * i + 1] << 8 | (uint64_t)b[3 * i + 2] << 16;
    default: return ((const uint32_t *)p)[i];
    }
}

void sl__narrow_encode(const void *values, int wide, int64_t n, int64_t base, uint64_t step,
                       int width, void *out)
{
    uint8_t *o = out;
    for (int64_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)wide_get(values, wide, i) - (uint64_t)base;
        d = step == 1 ? d : d / step;
        switch (width) {
        case 1: o[i] = (uint8_t)d; break;
        case 2: ((uint16_t *)out)[i] = (uint16_t)d; break;
        case 3:
            o[3 * i] = (uint8_t)d, o[3 * i + 1] = (uint8_t)(d >> 8);
            o[3 * i + 2] = (uint8_t)(d >> 16);
            break;
        default: ((uint32_t *)out)[i] = (uint32_t)d; break;
        }
    }
}

void sl__narrow_decode(const void *narrow, int width, int64_t n, int64_t base, uint64_t step,
                       int wide, void *out)
{
    for (int64_t i = 0; i < n; i++) {
        /* wraps as the wide type */
        uint64_t v = (uint64_t)base + narrow_get(narrow, width, i) * step;
        switch (wide) {
        case 2: ((uint16_t *)out)[i] = (uint16_t)v; break;
        case 4: ((uint32_t *)out)[i] = (uint32_t)v; break;
        default: ((uint64_t *)out)[i] = v; break;
        }
    }
}

int sl__buf_narrow(struct sl__buf *b, int wide, int64_t first, int64_t n,
                   struct sl__narrow **out)
{
    *out = NULL;
    if (!b || b->kind == SL__MEM_DEVICE || b->kind == SL__MEM_FOREIGN || n <= 0 || first < 0 ||
        (first + n) * wide > b->bytes)
        return SL_OK;
    if (b->narrow) { /* another column shares the buffer: one copy serves both */
        *out = b->narrow;
        return SL_OK;
    }
    const char *values = (const char *)b->ptr + first * wide;
    int64_t base;
    uint64_t step;
    int width = sl__narrow_plan(values, wide, n, &base, &step);
    if (width == 0)
        return SL_OK;
    struct sl__narrow *nw = sl__calloc(1, sizeof *nw);
    if (!nw || !(nw->buf = sl__buf_new(n * width))) {
        sl__free(nw, sizeof *nw);
        return sl__set_last_error(SL_ENOMEM, "out of memory (a narrow copy of %" PRId64
                                  " bytes)", n * width);
    }
    sl__narrow_encode(values, wide, n, base, step, width, nw->buf->ptr);
    nw->base = base;
    nw->step = step;
    nw->first = first;
    nw->n = n;
    nw->width = (uint8_t)width;
    nw->wide = (uint8_t)wide;
    b->narrow = nw;
    *out = nw;
    return SL_OK;
}

void sl__narrow_free(struct sl__narrow *nw)
{
    if (!nw)
        return;
    sl__buf_unref(nw->next);
    sl__buf_unref(nw->buf);
    sl__free(nw, sizeof *nw);
}

const struct sl__narrow *sl__narrow_of(const struct sl__buf *b, int wide, int64_t first,
                                       int64_t n)
{
    const struct sl__narrow *nw = b ? b->narrow : NULL;
    if (!nw || nw->wide != wide || first < nw->first || first + n > nw->first + nw->n)
        return NULL;
    return nw;
}

bool sl__narrow_whole(const struct sl__buf *b)
{
    const struct sl__narrow *nw = b ? b->narrow : NULL;
    return nw && nw->first == 0 && nw->n * nw->wide == b->bytes;
}

/* The columns of a table that get narrow copies, shared by sl__table_narrow's threads. */
struct narrow_jobs {
    struct narrow_job {
        struct sl__buf *buf;
        int wide;
        int64_t first, n;
    } *job;
    int64_t n;
    _Atomic int64_t next;
    _Atomic int rc;
};

static void narrow_worker(void *arg, int part, int parts)
{
    struct narrow_jobs *js = arg;
    (void)part, (void)parts; /* parts take jobs from the shared counter */
    for (int64_t k; (k = atomic_fetch_add(&js->next, 1)) < js->n;) {
        struct narrow_job *j = &js->job[k];
        struct sl__narrow *nw;
        int rc = sl__buf_narrow(j->buf, j->wide, j->first, j->n, &nw);
        if (rc < 0)
            atomic_store(&js->rc, rc);
    }
}

/* Adds b to the set of `slots` (a power of two) buffer addresses; false when it was in. */
static bool buf_set_add(const struct sl__buf **set, uint64_t slots, const struct sl__buf *b)
{
    for (uint64_t h = sl__mix64((uint64_t)(uintptr_t)b) & (slots - 1);; h = (h + 1) & (slots - 1)) {
        if (!set[h]) {
            set[h] = b;
            return true;
        }
        if (set[h] == b)
            return false;
    }
}

int sl__table_narrow(sl_table_t *t)
{
    struct narrow_jobs js = {0};
    int64_t cap = 0;
    for (int64_t i = 0; i < t->n_batches; i++)
        cap += t->batches[i]->n_cols;
    uint64_t slots = 16;
    while (slots < 2 * (uint64_t)cap)
        slots <<= 1;
    const struct sl__buf **seen = cap ? sl__calloc(slots, sizeof *seen) : NULL;
    if (cap == 0 || !seen || !(js.job = sl__malloc((size_t)cap * sizeof *js.job))) {
        sl__free(seen, (size_t)slots * sizeof *seen);
        return cap == 0 ? SL_OK : sl__set_last_error(SL_ENOMEM, "out of memory");
    }
    for (int64_t i = 0; i < t->n_batches; i++) {
        const sl_batch_t *b = t->batches[i];
        for (int c = 0; c < b->n_cols; c++) {
            const struct sl__col *col = &b->cols[c];
            int wide = sl__narrow_wide_width(col->type);
            /* a buffer once (its first column's rows): no two threads on it */
            if (wide > 0 && b->n_rows > 0 && col->data && !col->data->narrow &&
                buf_set_add(seen, slots, col->data))
                js.job[js.n++] = (struct narrow_job){col->data, wide, col->offset, b->n_rows};
        }
    }
    sl__free(seen, (size_t)slots * sizeof *seen);
    /* Each column is a pass over its values to find the range and one to write them: a
     * few seconds for TPC-H's lineitem at SF 10 on one core, so on several. */
    int n_threads = sl__host_threads(16);
    sl__par_for(js.n < n_threads ? (int)js.n : n_threads, narrow_worker, &js);
    sl__free(js.job, (size_t)cap * sizeof *js.job);
    /* Each whole column's copy names the same column's in the next batch: the scan's
     * next morsel, which an upload can send ahead while this one is computed on. */
    for (int64_t i = 0; i + 1 < t->n_batches; i++) {
        const sl_batch_t *b = t->batches[i], *nb = t->batches[i + 1];
        for (int c = 0; c < b->n_cols && c < nb->n_cols; c++) {
            struct sl__buf *x = b->cols[c].data, *y = nb->cols[c].data;
            if (!sl__narrow_whole(x) || !sl__narrow_whole(y) || x->narrow->next || x == y ||
                y->narrow->wide != x->narrow->wide)
                continue;
            sl__buf_ref(y);
            x->narrow->next = y;
        }
    }
    int rc = atomic_load(&js.rc);
    return rc < 0 ? sl__set_last_error(rc, "out of memory (narrow copies of a table)") : SL_OK;
}
