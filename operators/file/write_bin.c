/* write.bin: writes its input to an SLCF binary column file (docs/FILE_FORMAT.md); a
 * sink with no output rows. Workers keep references to the batches they sink, tagged
 * with the source task index; finalize restores the source order and writes, to a
 * temporary file beside `path`: a zeroed header area, then each column's value
 * section, validity section and (strings) data section (64-byte aligned), hashing
 * each section as it goes;
 * then the header with the section offsets and checksums, and renames the file over
 * `path` (a FIFO or device target, written in place, cannot seek: a first pass that
 * writes nothing computes the header, which then goes out first). Memory: the input batches stay referenced until finalize (no copy). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    uint64_t doff, dbytes, dsum, dict_n; /* strings: bytes; DICT: the dictionary */
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

/* A section written while hashed. */
struct section {
    struct sl__wfile *w;
    struct sl__xxh64 h;
    char *err;
    size_t err_len;
};

static int sec_put(struct section *s, const void *p, size_t n)
{
    sl__xxh64_update(&s->h, p, n);
    return sl__wfile_write(s->w, p, n, s->err, s->err_len);
}

static int64_t str_off(const struct sl__col *col, int64_t k)
{
    return col->type == SL_TYPE_UTF8 ? ((const int32_t *)col->data->ptr)[k]
                                     : ((const int64_t *)col->data->ptr)[k];
}

/* String values: offsets rebased to one run from 0 (the values section), then every
 * batch's bytes (the data section). */
static int write_strings(struct section *sec, const struct sl__pieces *g, int c,
                         struct colinfo *ci)
{
    bool large = ((const sl_batch_t *)g->v[0].ptr)->cols[c].type == SL_TYPE_LARGE_UTF8;
    int64_t base = 0;
    int rc = SL_OK;
    if (!large) {
        int32_t zero = 0;
        rc = sec_put(sec, &zero, 4);
    } else {
        rc = sec_put(sec, &base, 8);
    }
    for (int64_t i = 0; i < g->n && rc >= 0; i++) {
        const sl_batch_t *b = g->v[i].ptr;
        const struct sl__col *col = &b->cols[c];
        int64_t first = str_off(col, col->offset);
        for (int64_t r = 1; r <= b->n_rows && rc >= 0; r++) {
            int64_t o = base + str_off(col, col->offset + r) - first;
            if (!large && o > INT32_MAX) {
                snprintf(sec->err, sec->err_len, "column %d holds more than 2^31-1 bytes of "
                         "utf8 strings (make it large_utf8)", c + 1);
                return SL_EOVERFLOW;
            }
            int32_t o32 = (int32_t)o;
            rc = large ? sec_put(sec, &o, 8) : sec_put(sec, &o32, 4);
        }
        base += str_off(col, col->offset + b->n_rows) - first;
    }
    ci->dbytes = (uint64_t)base;
    return rc;
}

static int write_string_bytes(struct section *sec, const struct sl__pieces *g, int c)
{
    int rc = SL_OK;
    for (int64_t i = 0; i < g->n && rc >= 0; i++) {
        const sl_batch_t *b = g->v[i].ptr;
        const struct sl__col *col = &b->cols[c];
        int64_t lo = str_off(col, col->offset), hi = str_off(col, col->offset + b->n_rows);
        if (hi > lo)
            rc = sec_put(sec, (const char *)col->chars->ptr + lo, (size_t)(hi - lo));
    }
    return rc;
}

/* DICT codes: one dictionary for the file. Batches that share a dictionary (the usual
 * case) keep their codes; otherwise their dictionaries are merged into `merged` and
 * the codes remapped. Null rows get code 0. */
static int write_codes(struct section *sec, const struct sl__pieces *g, int c,
                       struct sl__text_col *merged, bool shared)
{
    int32_t *remap = NULL, *buf = NULL;
    int64_t remap_n = 0, buf_n = 0;
    const struct sl__dict *prev = NULL;
    int rc = SL_OK;
    for (int64_t i = 0; i < g->n && rc >= 0; i++) {
        const sl_batch_t *b = g->v[i].ptr;
        const struct sl__col *col = &b->cols[c];
        if (!shared && col->dict != prev) { /* map this dictionary onto the merged one */
            sl__free(remap, (size_t)remap_n * 4);
            remap_n = col->dict->n;
            remap = sl__malloc((size_t)(remap_n ? remap_n : 1) * 4);
            if (!remap) {
                remap_n = 0;
                rc = SL_ENOMEM;
            }
            const int32_t *o = col->dict->offsets->ptr;
            const char *ch = col->dict->chars ? col->dict->chars->ptr : "";
            for (int64_t k = 0; k < remap_n && rc >= 0; k++)
                rc = sl__text_col_put(merged, remap, k, ch + o[k], (size_t)(o[k + 1] - o[k]));
            prev = col->dict;
        }
        if (rc >= 0 && buf_n < b->n_rows) {
            sl__free(buf, (size_t)buf_n * 4);
            buf_n = b->n_rows;
            if (!(buf = sl__malloc((size_t)buf_n * 4))) {
                buf_n = 0;
                rc = SL_ENOMEM;
            }
        }
        if (rc < 0)
            break;
        const int32_t *codes = (const int32_t *)col->data->ptr + col->offset;
        for (int64_t r = 0; r < b->n_rows; r++)
            buf[r] = !sl__col_valid(col, r) ? 0 : shared ? codes[r] : remap[codes[r]];
        rc = sec_put(sec, buf, (size_t)b->n_rows * 4);
    }
    sl__free(remap, (size_t)remap_n * 4);
    sl__free(buf, (size_t)buf_n * 4);
    if (rc == SL_ENOMEM)
        snprintf(sec->err, sec->err_len, "out of memory");
    if (rc == SL_EOVERFLOW)
        snprintf(sec->err, sec->err_len, "column %d: its batches' dictionaries merged pass "
                 "2^31 bytes or strings", c + 1);
    return rc;
}

/* The dictionary section: dict_n + 1 int32 offsets, then the bytes. */
static int write_dictionary(struct section *sec, const struct sl__pieces *g, int c,
                            const struct sl__text_col *merged, bool shared, struct colinfo *ci)
{
    static const int32_t zero = 0;
    const struct sl__dict *d = shared ? ((const sl_batch_t *)g->v[0].ptr)->cols[c].dict : NULL;
    int64_t n = shared ? d->n : merged->dict_n;
    const int32_t *o = shared ? d->offsets->ptr : n ? merged->dict_off : &zero;
    const char *ch = shared ? (d->chars ? d->chars->ptr : "") : merged->chars;
    ci->dict_n = (uint64_t)n;
    ci->dbytes = (uint64_t)(n + 1) * 4 + (uint64_t)o[n];
    int rc = sec_put(sec, o, (size_t)(n + 1) * 4);
    return rc >= 0 && o[n] > 0 ? sec_put(sec, ch, (size_t)o[n]) : rc;
}

static bool one_dictionary(const struct sl__pieces *g, int c)
{
    for (int64_t i = 1; i < g->n; i++)
        if (((const sl_batch_t *)g->v[i].ptr)->cols[c].dict !=
            ((const sl_batch_t *)g->v[0].ptr)->cols[c].dict)
            return false;
    return true;
}

/* Writes the values (string offsets, codes) section at the current offset. */
static int write_values(struct section *sec, const struct sl__pieces *g, int c, enum sl_type type,
                        struct colinfo *ci, struct sl__text_col *merged, bool shared)
{
    if (type == SL_TYPE_UTF8 || type == SL_TYPE_LARGE_UTF8)
        return g->n ? write_strings(sec, g, c, ci) : sec_put(sec, "\0\0\0\0\0\0\0",
                                                             type == SL_TYPE_UTF8 ? 4 : 8);
    if (type == SL_TYPE_DICT)
        return write_codes(sec, g, c, merged, shared);
    size_t width = sl_type_width(type);
    int rc = SL_OK;
    for (int64_t i = 0; i < g->n && rc >= 0; i++) {
        const sl_batch_t *b = g->v[i].ptr;
        rc = sec_put(sec, sl__col_values(b, c), (size_t)b->n_rows * width);
    }
    return rc;
}

static int write_validity(struct sl__wfile *w, const struct sl__pieces *g, int c,
                          uint64_t n_rows, struct colinfo *ci, char *err, size_t err_len)
{
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
    int rc = sl__wfile_write(w, bits, (size_t)ci->bbytes, err, err_len);
    sl__free(bits, (size_t)ci->bbytes);
    return rc >= 0 ? sl__wfile_pad64(w, err, err_len) : rc;
}

/* Writes column c's sections (values, validity, data) at the current (aligned) offset
 * and fills ci. */
static int write_column(struct sl__wfile *w, const struct sl__pieces *g, int c, enum sl_type type,
                        uint64_t n_rows, struct colinfo *ci, char *err, size_t err_len)
{
    struct section sec = {.w = w, .err = err, .err_len = err_len};
    struct sl__text_col merged = {.type = SL_TYPE_DICT};
    bool shared = type == SL_TYPE_DICT && g->n > 0 && one_dictionary(g, c);
    sl__xxh64_init(&sec.h);
    ci->voff = w->off;
    ci->vbytes = (uint64_t)sl__col_data_bytes(type, (int64_t)n_rows);
    int rc = write_values(&sec, g, c, type, ci, &merged, shared);
    ci->vsum = sl__xxh64_final(&sec.h);
    if (rc >= 0)
        rc = sl__wfile_pad64(w, err, err_len);
    if (rc >= 0)
        rc = write_validity(w, g, c, n_rows, ci, err, err_len);
    ci->dsum = sl__xxh64(NULL, 0);
    if (rc >= 0 && sl_type_is_string(type)) {
        ci->doff = w->off;
        sl__xxh64_init(&sec.h);
        rc = type == SL_TYPE_DICT ? write_dictionary(&sec, g, c, &merged, shared, ci)
                                  : write_string_bytes(&sec, g, c);
        ci->dsum = sl__xxh64_final(&sec.h);
        if (rc >= 0)
            rc = sl__wfile_pad64(w, err, err_len);
    }
    sl__text_col_reset(&merged);
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
        sl__put_u32(e, (uint32_t)s->fields[c].type); /* id, precision, scale, 0 */
        sl__put_u32(e + 4, (uint32_t)nl);
        sl__put_u64(e + 8, ci[c].nulls);
        sl__put_u64(e + 16, ci[c].voff);
        sl__put_u64(e + 24, ci[c].vbytes);
        sl__put_u64(e + 32, ci[c].boff);
        sl__put_u64(e + 40, ci[c].bbytes);
        sl__put_u64(e + 48, ci[c].vsum);
        sl__put_u64(e + 56, ci[c].bsum);
        sl__put_u64(e + 64, ci[c].doff);
        sl__put_u64(e + 72, ci[c].dbytes);
        sl__put_u64(e + 80, ci[c].dsum);
        sl__put_u64(e + 88, ci[c].dict_n);
        memcpy(name, s->fields[c].name, nl);
        name += nl;
    }
    sl__put_u64(hd + 32, sl__xxh64(hd, header_bytes));
}

/* The header area (hd as it stands), then every column's sections. */
static int write_body(struct sl__wfile *w, sl_task_t *t, const struct sl__pieces *g,
                      const sl_schema_t *s, uint64_t n_rows, struct colinfo *ci,
                      const uint8_t *hd, size_t header_bytes, char *err, size_t err_len)
{
    int rc = sl__wfile_write(w, hd, header_bytes, err, err_len);
    if (rc >= 0)
        rc = sl__wfile_pad64(w, err, err_len);
    for (int c = 0; c < s->n_fields && rc >= 0; c++) {
        rc = write_column(w, g, c, s->fields[c].type, n_rows, &ci[c], err, err_len);
        if (sl_task_cancelled(t))
            rc = SL_ECANCELED;
    }
    return rc;
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
    int rc = sl__wfile_open(&w, path, t, err, sizeof err);
    /* A FIFO or device cannot seek back to the header: a first pass that writes nothing
     * computes the offsets and checksums, so the header goes out first. */
    bool seekable = rc >= 0 && lseek(w.out.fd, 0, SEEK_CUR) >= 0;
    if (rc >= 0 && !seekable) {
        w.dry = true;
        rc = write_body(&w, t, g, s, n_rows, ci, hd, header_bytes, err, sizeof err);
        fill_header(hd, (uint32_t)header_bytes, s, n_rows, w.off, ci);
        w.dry = false;
        w.off = 0;
    }
    if (rc >= 0)
        rc = write_body(&w, t, g, s, n_rows, ci, hd, header_bytes, err, sizeof err);
    if (rc >= 0 && seekable) {
        /* The file ends after the last section's padding. */
        fill_header(hd, (uint32_t)header_bytes, s, n_rows, w.off, ci);
        rc = sl__wfile_pwrite(&w, hd, header_bytes, 0, err, sizeof err);
    }
    if (rc >= 0)
        rc = sl__wfile_commit(&w, err, sizeof err);
    sl__free(ci, 0);
    sl__free(hd, 0);
    if (rc < 0) {
        sl__wfile_abort(&w); /* no temporary file stays behind */
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
