/* write.bin: writes its input to an SLCF binary column file (docs/FILE_FORMAT.md); a
 * sink with no output rows. Workers keep references to the batches they sink, tagged
 * with the source task index; finalize restores the source order and writes, to a
 * temporary file beside `path`: a zeroed header area, then each column's value
 * section and validity section (64-byte aligned), hashing each section as it goes;
 * then the header with the section offsets and checksums, and renames the file over
 * `path`. Memory: the input batches stay referenced until finalize (no copy). */
#include <stdio.h>
#include <string.h>

#include "file_int.h"

static const struct sl_option_def wbin_options[] = {
    {"path", SL_OPT_STRING, NULL, "file to write (replaced atomically)"},
};

static void wbin_data_free(void *p)
{
    sl__free_str(p);
}

static int wbin_bind(sl_bind_t *b)
{
    const char *path;
    int rc = sl_bind_option_str(b, "path", &path);
    if (rc < 0)
        return rc;
    const sl_schema_t *s = sl_bind_input_schema(b, 0);
    if (s->n_fields == 0)
        return sl_bind_fail(b, SL_EINVAL, "its input has no columns");
    for (int i = 0; i < s->n_fields; i++) {
        if (strlen(s->fields[i].name) == 0 || strlen(s->fields[i].name) > SL__SLCF_MAX_NAME)
            return sl_bind_fail(b, SL_EINVAL, "column %d: names must have 1 to %u bytes", i + 1,
                                SL__SLCF_MAX_NAME);
    }
    char *p = sl__strdup(path);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, p, wbin_data_free);
    return SL_OK;
}

static void unref_batch(void *p, size_t bytes)
{
    (void)bytes;
    sl_batch_unref(p);
}

static void wbin_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    sl__pieces_free(ls, unref_batch);
}

static void wbin_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    sl__pieces_free(gs, unref_batch);
}

static int wbin_sink(sl_task_t *t)
{
    struct sl__pieces *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    sl_batch_t *b = sl_task_input(t);
    if (b->n_rows == 0)
        return SL_OK;
    sl_batch_ref(b);
    if (sl__pieces_push(ls, sl_task_index(t), b, 0) < 0) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    return SL_OK;
}

static int wbin_combine(sl_task_t *t)
{
    if (sl__pieces_move(sl_task_gstate(t), sl_task_lstate(t)) < 0)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    return SL_OK;
}

struct colinfo {
    uint64_t nulls, voff, vbytes, boff, bbytes, vsum, bsum;
};

static uint64_t count_nulls(const sl_batch_t *b, int c)
{
    const struct sl__col *col = &b->cols[c];
    if (!col->validity)
        return 0;
    uint64_t n = 0;
    for (int64_t r = 0; r < b->n_rows; r++)
        n += !sl__col_valid(col, r);
    return n;
}

/* Writes column c's sections at the current (aligned) offset and fills ci. */
static int write_column(struct sl__wfile *w, const struct sl__pieces *g, int c, enum sl_type type,
                        uint64_t n_rows, struct colinfo *ci, char *err, size_t err_len)
{
    size_t width = sl_type_width(type);
    struct sl__xxh64 h;
    sl__xxh64_init(&h);
    ci->voff = w->off;
    ci->vbytes = n_rows * width;
    int rc;
    for (int64_t i = 0; i < g->n; i++) {
        const sl_batch_t *b = g->v[i].ptr;
        const void *v = sl__col_values(b, c);
        sl__xxh64_update(&h, v, (size_t)b->n_rows * width);
        if ((rc = sl__wfile_write(w, v, (size_t)b->n_rows * width, err, err_len)) < 0)
            return rc;
    }
    ci->vsum = sl__xxh64_final(&h);
    if ((rc = sl__wfile_pad64(w, err, err_len)) < 0)
        return rc;
    ci->boff = w->off;
    ci->bbytes = ci->nulls ? (n_rows + 7) / 8 : 0;
    ci->bsum = sl__xxh64(NULL, 0);
    if (!ci->nulls)
        return SL_OK;
    /* Concatenate the validity of every batch into one bitmap (unused bits are 0). */
    uint8_t *bits = sl__calloc(1, (size_t)ci->bbytes);
    if (!bits) {
        snprintf(err, err_len, "out of memory");
        return SL_ENOMEM;
    }
    uint64_t row = 0;
    for (int64_t i = 0; i < g->n; i++) {
        const sl_batch_t *b = g->v[i].ptr;
        for (int64_t r = 0; r < b->n_rows; r++, row++) {
            if (sl__col_valid(&b->cols[c], r))
                bits[row >> 3] |= (uint8_t)(1u << (row & 7));
        }
    }
    ci->bsum = sl__xxh64(bits, (size_t)ci->bbytes);
    rc = sl__wfile_write(w, bits, (size_t)ci->bbytes, err, err_len);
    sl__free(bits, (size_t)ci->bbytes);
    if (rc >= 0)
        rc = sl__wfile_pad64(w, err, err_len);
    return rc;
}

static void fill_header(uint8_t *hd, uint32_t header_bytes, const sl_schema_t *s, uint64_t n_rows,
                        uint64_t file_bytes, const struct colinfo *ci)
{
    memcpy(hd, SL__SLCF_MAGIC, 4);
    sl__put_u16(hd + 4, SL__SLCF_VERSION);
    sl__put_u16(hd + 6, 0);
    sl__put_u32(hd + 8, (uint32_t)s->n_fields);
    sl__put_u32(hd + 12, header_bytes);
    sl__put_u64(hd + 16, n_rows);
    sl__put_u64(hd + 24, file_bytes);
    sl__put_u64(hd + 32, 0);
    uint8_t *name = hd + SL__SLCF_FIXED_BYTES + (size_t)s->n_fields * SL__SLCF_ENTRY_BYTES;
    for (int c = 0; c < s->n_fields; c++) {
        uint8_t *e = hd + SL__SLCF_FIXED_BYTES + (size_t)c * SL__SLCF_ENTRY_BYTES;
        size_t nl = strlen(s->fields[c].name);
        e[0] = (uint8_t)s->fields[c].type;
        e[1] = e[2] = e[3] = 0;
        sl__put_u32(e + 4, (uint32_t)nl);
        sl__put_u64(e + 8, ci[c].nulls);
        sl__put_u64(e + 16, ci[c].voff);
        sl__put_u64(e + 24, ci[c].vbytes);
        sl__put_u64(e + 32, ci[c].boff);
        sl__put_u64(e + 40, ci[c].bbytes);
        sl__put_u64(e + 48, ci[c].vsum);
        sl__put_u64(e + 56, ci[c].bsum);
        memcpy(name, s->fields[c].name, nl);
        name += nl;
    }
    sl__put_u64(hd + 32, sl__xxh64(hd, header_bytes));
}

static int wbin_finalize(sl_task_t *t)
{
    const char *path = sl_op_data(sl_task_op(t));
    struct sl__pieces *g = sl_task_gstate(t);
    const sl_schema_t *s = sl_op_input_schema(sl_task_op(t), 0);
    sl__pieces_sort(g);
    uint64_t n_rows = 0;
    for (int64_t i = 0; i < g->n; i++)
        n_rows += (uint64_t)((sl_batch_t *)g->v[i].ptr)->n_rows;
    size_t header_bytes = SL__SLCF_FIXED_BYTES + (size_t)s->n_fields * SL__SLCF_ENTRY_BYTES;
    for (int c = 0; c < s->n_fields; c++)
        header_bytes += strlen(s->fields[c].name);
    struct colinfo *ci = sl__calloc((size_t)s->n_fields, sizeof *ci);
    uint8_t *hd = sl__calloc(1, header_bytes);
    if (!ci || !hd) {
        sl__free(ci, 0);
        sl__free(hd, 0);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    for (int c = 0; c < s->n_fields; c++) {
        for (int64_t i = 0; i < g->n; i++)
            ci[c].nulls += count_nulls(g->v[i].ptr, c);
    }
    char err[512];
    struct sl__wfile w;
    int rc = sl__wfile_open(&w, path, err, sizeof err);
    if (rc >= 0)
        rc = sl__wfile_write(&w, hd, header_bytes, err, sizeof err); /* placeholder */
    if (rc >= 0)
        rc = sl__wfile_pad64(&w, err, sizeof err);
    for (int c = 0; c < s->n_fields && rc >= 0; c++) {
        rc = write_column(&w, g, c, s->fields[c].type, n_rows, &ci[c], err, sizeof err);
        if (sl_task_cancelled(t))
            rc = SL_ECANCELED;
    }
    if (rc >= 0) {
        /* The file ends after the last section's padding. */
        fill_header(hd, (uint32_t)header_bytes, s, n_rows, w.off, ci);
        rc = sl__wfile_pwrite(&w, hd, header_bytes, 0, err, sizeof err);
    }
    if (rc >= 0)
        rc = sl__wfile_commit(&w, err, sizeof err);
    sl__free(ci, 0);
    sl__free(hd, 0);
    if (rc < 0) {
        if (w.path || w.tmp)
            sl__wfile_abort(&w);
        return rc == SL_ECANCELED ? rc : sl_task_fail(t, rc, "%s", err);
    }
    return SL_OK;
}

static const struct sl_impl sink_impls[] = {{.device = SL_DEVICE_CPU, .run = wbin_sink}};
static const struct sl_phase sink_phase = {sink_impls, 1, sl__cost_linear};
static const struct sl_impl combine_impls[] = {{.device = SL_DEVICE_CPU, .run = wbin_combine}};
static const struct sl_phase combine_phase = {combine_impls, 1, NULL};
static const struct sl_impl finalize_impls[] = {{.device = SL_DEVICE_CPU, .run = wbin_finalize}};
static const struct sl_phase finalize_phase = {finalize_impls, 1, NULL};

const struct sl_op_def sl__write_bin_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK,
    .name = "write.bin",
    .doc = "writes its input to an SLCF binary column file (atomically replaced)",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = wbin_options,
    .n_options = sizeof wbin_options / sizeof wbin_options[0],
    .bind = wbin_bind,
    .global_state_bytes = sizeof(struct sl__pieces),
    .local_state_bytes = sizeof(struct sl__pieces),
    .fini_global = wbin_fini_global,
    .fini_local = wbin_fini_local,
    .sink = &sink_phase,
    .combine = &combine_phase,
    .finalize = &finalize_phase,
};
