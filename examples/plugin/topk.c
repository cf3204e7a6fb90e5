/* A sluice plugin adding the operator `topk`: the k rows with the largest (or smallest)
 * values of one column, best first, all columns kept.
 *
 *     top = topk(events) column=score k=10 order=desc
 *
 * Rows whose key is null or NaN are never selected. Among rows with equal keys at the
 * cut, which ones are kept is unspecified. It runs on the CPU: each worker keeps a heap
 * of its k best rows (sink), combine merges the heaps, and the source emits the result.
 *
 * It is written with <sluice/plugin_host.h>, so the sl_* calls below go through the
 * host table the entry receives and the plugin needs no sluice symbol. Build it with
 * meson (examples/plugin/meson.build) or `make -C examples plugin/topk.so`, then
 * `sluice run --plugin examples/plugin/topk.so examples/plugin/topk.plan`. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin_host.h>

SL_PLUGIN_HOST_DEFINE;

#define TOPK_MAX_K (1 << 24)
#define TOPK_MAX_COLS 64

/* Per node, from bind. */
struct topk_data {
    int key;
    bool asc;
    int n_cols;
    int64_t k;
    enum sl_type types[TOPK_MAX_COLS];
};

/* The k best rows seen so far: row r's column c is vals[c * k + r] (8 bytes whatever
 * the type) and nulls[c * k + r]. heap[] lists the filled rows as a binary heap whose
 * root is the worst kept row, so a better candidate replaces the root. Local state per
 * worker and global state have this layout; storage comes from sl_task_alloc. */
struct topk_heap {
    int64_t n;
    uint64_t *vals;
    uint8_t *nulls;
    int64_t *heap;
};

/* A key read as something comparable: integers exactly, floats as double. */
struct key {
    int64_t i;
    double f;
};

static struct key cell_key(enum sl_type type, uint64_t cell)
{
    struct key k = {0, 0};
    switch (type) {
    case SL_TYPE_INT32: {
        int32_t v;
        memcpy(&v, &cell, 4);
        k.i = v;
        break;
    }
    case SL_TYPE_INT64:
        memcpy(&k.i, &cell, 8);
        break;
    case SL_TYPE_FLOAT32: {
        float v;
        memcpy(&v, &cell, 4);
        k.f = v;
        break;
    }
    default:
        memcpy(&k.f, &cell, 8);
        break;
    }
    return k;
}

/* 1 if key a should rank before key b. */
static bool better(const struct topk_data *d, struct key a, struct key b)
{
    bool is_int = d->types[d->key] == SL_TYPE_INT32 || d->types[d->key] == SL_TYPE_INT64;
    if (is_int)
        return d->asc ? a.i < b.i : a.i > b.i;
    return d->asc ? a.f < b.f : a.f > b.f;
}

static struct key row_key(const struct topk_data *d, const struct topk_heap *h, int64_t row)
{
    return cell_key(d->types[d->key], h->vals[(int64_t)d->key * d->k + row]);
}

/* Heap order: a parent is never better than its children (the root is the worst). */
static void sift_down(const struct topk_data *d, struct topk_heap *h, int64_t i)
{
    for (;;) {
        int64_t w = i, l = 2 * i + 1, r = l + 1;
        if (l < h->n && better(d, row_key(d, h, h->heap[w]), row_key(d, h, h->heap[l])))
            w = l;
        if (r < h->n && better(d, row_key(d, h, h->heap[w]), row_key(d, h, h->heap[r])))
            w = r;
        if (w == i)
            return;
        int64_t tmp = h->heap[i];
        h->heap[i] = h->heap[w];
        h->heap[w] = tmp;
        i = w;
    }
}

static void sift_up(const struct topk_data *d, struct topk_heap *h, int64_t i)
{
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!better(d, row_key(d, h, h->heap[p]), row_key(d, h, h->heap[i])))
            return;
        int64_t tmp = h->heap[i];
        h->heap[i] = h->heap[p];
        h->heap[p] = tmp;
        i = p;
    }
}

static int heap_alloc(sl_task_t *t, const struct topk_data *d, struct topk_heap *h)
{
    size_t cells = (size_t)d->n_cols * (size_t)d->k;
    h->vals = sl_task_alloc(t, cells * sizeof *h->vals + 1);
    h->nulls = sl_task_alloc(t, cells + 1);
    h->heap = sl_task_alloc(t, (size_t)d->k * sizeof *h->heap + 1);
    return h->vals && h->nulls && h->heap ? SL_OK : SL_ENOMEM; /* the host recorded why */
}

/* Offers a row (cells and nulls per column) with key `key` to the heap. */
static void heap_offer(const struct topk_data *d, struct topk_heap *h, struct key key,
                       const uint64_t *cells, const uint8_t *nulls)
{
    int64_t row;
    bool replace = h->n == d->k;
    if (!replace) {
        row = h->n;
        h->heap[h->n++] = row;
    } else if (d->k > 0 && better(d, key, row_key(d, h, h->heap[0]))) {
        row = h->heap[0];
    } else {
        return;
    }
    for (int c = 0; c < d->n_cols; c++) {
        h->vals[(int64_t)c * d->k + row] = cells[c];
        h->nulls[(int64_t)c * d->k + row] = nulls[c];
    }
    if (replace)
        sift_down(d, h, 0);
    else
        sift_up(d, h, h->n - 1);
}

static bool valid_at(const struct sl_column *c, int64_t i)
{
    return !c->validity || (c->validity[(c->offset + i) >> 3] >> ((c->offset + i) & 7) & 1);
}

static uint64_t cell_at(const struct sl_column *c, size_t width, int64_t i)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)c->data + (c->offset + i) * (int64_t)width, width);
    return v;
}

static int topk_sink(sl_task_t *t)
{
    const struct topk_data *d = sl_op_data(sl_task_op(t));
    struct topk_heap *h = sl_task_lstate(t);
    if (d->k == 0)
        return SL_OK;
    if (!h->heap && heap_alloc(t, d, h) < 0)
        return SL_ENOMEM;
    sl_batch_t *in = sl_task_input(t);
    struct sl_column cols[TOPK_MAX_COLS];
    size_t width[TOPK_MAX_COLS];
    for (int c = 0; c < d->n_cols; c++) {
        sl_batch_column(in, c, &cols[c]);
        width[c] = sl_type_width(cols[c].type);
    }
    bool is_float = d->types[d->key] == SL_TYPE_FLOAT32 || d->types[d->key] == SL_TYPE_FLOAT64;
    uint64_t cells[TOPK_MAX_COLS];
    uint8_t nulls[TOPK_MAX_COLS];
    int64_t n = sl_batch_num_rows(in);
    for (int64_t i = 0; i < n; i++) {
        const struct sl_column *kc = &cols[d->key];
        if (!valid_at(kc, i))
            continue;
        struct key key = cell_key(kc->type, cell_at(kc, width[d->key], i));
        if ((is_float && isnan(key.f)) ||
            (h->n == d->k && !better(d, key, row_key(d, h, h->heap[0]))))
            continue; /* the common case once the heap is full: rejected by key alone */
        for (int c = 0; c < d->n_cols; c++) {
            cells[c] = cell_at(&cols[c], width[c], i);
            nulls[c] = !valid_at(&cols[c], i);
        }
        heap_offer(d, h, key, cells, nulls);
    }
    return SL_OK;
}

/* Merges one worker's heap into the global one (never concurrently for one node). */
static int topk_combine(sl_task_t *t)
{
    const struct topk_data *d = sl_op_data(sl_task_op(t));
    struct topk_heap *g = sl_task_gstate(t);
    const struct topk_heap *l = sl_task_lstate(t);
    if (l->n == 0)
        return SL_OK;
    if (!g->heap && heap_alloc(t, d, g) < 0)
        return SL_ENOMEM;
    uint64_t cells[TOPK_MAX_COLS];
    uint8_t nulls[TOPK_MAX_COLS];
    for (int64_t r = 0; r < l->n; r++) {
        for (int c = 0; c < d->n_cols; c++) {
            cells[c] = l->vals[(int64_t)c * d->k + r];
            nulls[c] = l->nulls[(int64_t)c * d->k + r];
        }
        heap_offer(d, g, row_key(d, l, r), cells, nulls);
    }
    return SL_OK;
}

/* Emits the kept rows best first: popping the root (the worst) fills from the end. */
static int topk_source(sl_task_t *t)
{
    const sl_op_t *op = sl_task_op(t);
    const struct topk_data *d = sl_op_data(op);
    struct topk_heap *g = sl_task_gstate(t);
    int64_t n = g->n;
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(op), n);
    if (!b)
        return SL_ENOMEM;
    void *out[TOPK_MAX_COLS];
    uint8_t *valid[TOPK_MAX_COLS] = {0};
    for (int c = 0; c < d->n_cols; c++)
        out[c] = sl_batch_column_data(b, c);
    for (int64_t pos = n - 1; pos >= 0; pos--) {
        int64_t row = g->heap[0];
        g->heap[0] = g->heap[--g->n];
        sift_down(d, g, 0);
        for (int c = 0; c < d->n_cols; c++) {
            size_t w = sl_type_width(d->types[c]);
            uint64_t v = g->vals[(int64_t)c * d->k + row];
            memcpy((char *)out[c] + pos * (int64_t)w, &v, w);
            if (!g->nulls[(int64_t)c * d->k + row])
                continue;
            if (!valid[c] && !(valid[c] = sl_batch_column_validity(b, c))) {
                sl_batch_unref(b);
                return sl_task_fail(t, SL_ENOMEM, "topk: out of memory");
            }
            valid[c][pos >> 3] &= (uint8_t)~(1u << (pos & 7));
        }
    }
    return sl_task_emit(t, b);
}

static int topk_bind(sl_bind_t *b)
{
    const char *col, *order;
    int64_t k;
    int rc;
    if ((rc = sl_bind_option_str(b, "column", &col)) < 0 ||
        (rc = sl_bind_option_int(b, "k", &k)) < 0 ||
        (rc = sl_bind_option_str(b, "order", &order)) < 0)
        return rc;
    if (k < 0 || k > TOPK_MAX_K)
        return sl_bind_fail(b, SL_EINVAL, "k must be in 0..%d, got %lld", TOPK_MAX_K,
                            (long long)k);
    if (strcmp(order, "desc") && strcmp(order, "asc"))
        return sl_bind_fail(b, SL_EINVAL, "order must be desc or asc, got '%s'", order);
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    int n_cols = sl_schema_num_fields(in);
    if (n_cols > TOPK_MAX_COLS)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "at most %d columns", TOPK_MAX_COLS);
    struct topk_data *d = calloc(1, sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, d, free);
    d->key = sl_schema_find(in, col);
    if (d->key < 0)
        return sl_bind_fail(b, SL_ENOTFOUND, "no column '%s' in its input", col);
    d->asc = !strcmp(order, "asc");
    d->n_cols = n_cols;
    d->k = k;
    for (int c = 0; c < n_cols; c++) {
        const char *name;
        sl_schema_field(in, c, &name, &d->types[c]);
        if ((rc = sl_bind_add_column(b, name, d->types[c])) < 0)
            return rc;
    }
    int64_t rows = sl_bind_input_rows(b, 0);
    sl_bind_set_rows(b, rows >= 0 && rows < k ? rows : k);
    return SL_OK;
}

static const struct sl_option_def topk_options[] = {
    {"column", SL_OPT_STRING, NULL, "column to rank rows by"},
    {"k", SL_OPT_INT, "10", "number of rows to keep"},
    {"order", SL_OPT_STRING, "desc", "desc (largest first) or asc (smallest first)"},
};
static const struct sl_impl sink_impls[] = {{.device = SL_DEVICE_CPU, .run = topk_sink}};
static const struct sl_impl combine_impls[] = {{.device = SL_DEVICE_CPU, .run = topk_combine}};
static const struct sl_impl source_impls[] = {{.device = SL_DEVICE_CPU, .run = topk_source}};
static const struct sl_phase sink_phase = {sink_impls, 1, NULL};
static const struct sl_phase combine_phase = {combine_impls, 1, NULL};
static const struct sl_phase source_phase = {source_impls, 1, NULL};

static const struct sl_op_def topk_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK | SL_OP_SOURCE,
    .name = "topk",
    .doc = "the k rows with the largest (order=asc: smallest) values of a column (plugin)",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = topk_options,
    .n_options = sizeof topk_options / sizeof topk_options[0],
    .bind = topk_bind,
    .global_state_bytes = sizeof(struct topk_heap),
    .local_state_bytes = sizeof(struct topk_heap),
    .sink = &sink_phase,
    .combine = &combine_phase,
    .source = &source_phase,
};

int sl_plugin_entry(const struct sl_host_api *host, sl_registry_t *reg);
int sl_plugin_entry(const struct sl_host_api *host, sl_registry_t *reg)
{
    int rc = sl_plugin_init(host, reg);
    if (rc < 0)
        return rc;
    return sl_registry_add(reg, &topk_def);
}
