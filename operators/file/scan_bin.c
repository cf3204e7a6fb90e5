/* scan.bin: reads an SLCF binary column file (docs/FILE_FORMAT.md) in parallel morsels,
 * zero-copy: the file is mapped read-only and each morsel's batch points into the
 * mapping (a slice by row offset of each column's value and validity sections). Every
 * such buffer holds a reference to the mapping, so it is unmapped when the last batch
 * using it is freed, possibly after the query, inside a result table. On several ranks
 * (docs/DISTRIBUTED.md) each reads its share of the rows (sl__rank_share).
 *
 * The header is read and validated when the node is bound (to learn the schema) and
 * again when the query starts; with verify=true the start also checks the checksum of
 * every section, one sequential pass over the file before the morsels run. The start
 * always checks the values a reader could trip on (string offsets, UTF-8, dictionary
 * codes, bools, decimal digits). Versions 1 and 2 of the format are read. The file
 * must not be truncated or rewritten in place while mapped (write.bin never does:
 * it replaces files by rename). */
#include <stdio.h>
#include <string.h>

#include "expr/expr.h"
#include "file_int.h"
#include "value_text.h"

struct slcf_col {
    enum sl_type type;
    const uint8_t *name;
    uint32_t name_len;
    uint64_t nulls, voff, vbytes, boff, bbytes, vsum, bsum;
    uint64_t doff, dbytes, dsum, dict_n; /* version 2, strings: bytes or dictionary */
};

struct slcf_header {
    uint32_t version, entry_bytes;
    uint32_t n_cols;
    uint64_t n_rows;
    struct slcf_col *cols; /* n_cols entries (sl__malloc) */
};

struct bin_data {
    char *path;
    int verify;
    struct sl__collist file_cols; /* every column of the file, as bound */
    int n_out;
    int *file_col;                /* per output column: its column in the file */
    struct sl__expr *where;       /* predicate pushed into the scan, or NULL */
};

struct bin_global {
    struct sl__fmap *map;
    struct slcf_header h;
    struct sl__dict **dicts;  /* per file column: its dictionary (DICT), else NULL */
    int64_t morsel;
    int64_t lo, hi;           /* this rank's share of the rows (sl__rank_share) */
};

static const struct sl_option_def bin_options[] = {
    {"path", SL_OPT_STRING, NULL, "file to read"},
    {"columns", SL_OPT_STRING, "", "columns to produce, in this order: \"b,a\" (all if empty)"},
    {"verify", SL_OPT_BOOL, "true", "check every section's checksum before reading"},
    {"where", SL_OPT_STRING, "", "keep only rows where this predicate holds (as filter's)"},
};

#define FAIL(...) (snprintf(err, err_len, __VA_ARGS__), SL_EFORMAT)

static const char *sec_name(int sec)
{
    return sec == 2 ? "data" : sec ? "validity" : "values";
}

/* Checks one section's place. */
static int check_section(const char *path, uint32_t c, const struct slcf_col *col, int validity,
                         uint64_t off, uint64_t bytes, uint64_t data_start, uint64_t size,
                         char *err, size_t err_len)
{
    if (off % SL__SLCF_ALIGN)
        return FAIL("'%s': column %u '%.*s': %s section offset %llu is not a multiple of 64",
                    path, c + 1, (int)col->name_len, col->name, sec_name(validity),
                    (unsigned long long)off);
    if (off < data_start || off > size || bytes > size - off)
        return FAIL("'%s': column %u '%.*s': %s section [%llu, +%llu) lies outside the data "
                    "area [%llu, %llu)", path, c + 1, (int)col->name_len, col->name,
                    sec_name(validity), (unsigned long long)off, (unsigned long long)bytes,
                    (unsigned long long)data_start, (unsigned long long)size);
    return SL_OK;
}

/* Checks the fixed part of the header, the header checksum and the file size (rules
 * 1 to 4 of docs/FILE_FORMAT.md). */
static int check_fixed(const char *path, const uint8_t *p, uint64_t size, char *err,
                       size_t err_len)
{
    if (size < SL__SLCF_FIXED_BYTES)
        return FAIL("'%s': truncated: %llu bytes, less than the %u-byte fixed header", path,
                    (unsigned long long)size, SL__SLCF_FIXED_BYTES);
    if (memcmp(p, SL__SLCF_MAGIC, 4) != 0)
        return FAIL("'%s': bad magic %02x %02x %02x %02x at offset 0: not an SLCF file "
                    "(expected \"SLCF\")", path, p[0], p[1], p[2], p[3]);
    uint32_t version = sl__get_u16(p + 4), flags = sl__get_u16(p + 6);
    if (version != 1 && version != SL__SLCF_VERSION)
        return FAIL("'%s': unsupported format version %u at offset 4 (this build reads "
                    "versions 1 to %u)", path, version, SL__SLCF_VERSION);
    uint32_t entry_bytes = version == 1 ? SL__SLCF_ENTRY_BYTES_V1 : SL__SLCF_ENTRY_BYTES;
    if (flags != 0)
        return FAIL("'%s': unknown header flags 0x%x at offset 6", path, flags);
    uint32_t n_cols = sl__get_u32(p + 8), header_bytes = sl__get_u32(p + 12);
    uint64_t file_bytes = sl__get_u64(p + 24);
    if (n_cols == 0 || n_cols > SL__SLCF_MAX_COLS)
        return FAIL("'%s': column count %u at offset 8 is not in [1, %u]", path, n_cols,
                    SL__SLCF_MAX_COLS);
    uint64_t min_hb = SL__SLCF_FIXED_BYTES + (uint64_t)n_cols * entry_bytes;
    if (header_bytes < min_hb)
        return FAIL("'%s': header size %u at offset 12 is less than the %llu bytes of %u "
                    "column entries", path, header_bytes, (unsigned long long)min_hb, n_cols);
    if (header_bytes > size)
        return FAIL("'%s': truncated: %llu bytes, less than the %u-byte header", path,
                    (unsigned long long)size, header_bytes);
    /* The checksum covers the header with its checksum field read as zero. */
    static const uint8_t zero8[8];
    struct sl__xxh64 hs;
    sl__xxh64_init(&hs);
    sl__xxh64_update(&hs, p, 32);
    sl__xxh64_update(&hs, zero8, 8);
    sl__xxh64_update(&hs, p + 40, header_bytes - 40);
    uint64_t want = sl__get_u64(p + 32), got = sl__xxh64_final(&hs);
    if (want != got)
        return FAIL("'%s': header checksum mismatch over bytes [0, %u): stored %016llx, "
                    "computed %016llx", path, header_bytes, (unsigned long long)want,
                    (unsigned long long)got);
    if (size < file_bytes)
        return FAIL("'%s': truncated body: the file has %llu bytes, its header says %llu", path,
                    (unsigned long long)size, (unsigned long long)file_bytes);
    if (size > file_bytes)
        return FAIL("'%s': %llu unexpected bytes after the end the header gives (%llu)", path,
                    (unsigned long long)(size - file_bytes), (unsigned long long)file_bytes);
    return SL_OK;
}

/* The type of an entry: version 1 has int32..float64 in byte 0 (bytes 1-3 zero);
 * version 2 the whole enum sl_type value (id, precision, scale) in bytes 0-3. */
static bool entry_type(uint32_t version, const uint8_t *e, enum sl_type *type)
{
    uint32_t v = sl__get_u32(e);
    *type = (enum sl_type)v;
    if (version == 1)
        return v >= SL_TYPE_INT32 && v <= SL_TYPE_FLOAT64;
    return sl__type_valid(*type);
}

/* Reads and checks column entry c (rule 5); *name_off walks the names area. */
static int read_entry(const char *path, const uint8_t *p, uint64_t size, uint32_t c,
                      const struct slcf_header *h, uint32_t header_bytes, uint64_t *name_off,
                      struct slcf_col *col, char *err, size_t err_len)
{
    uint64_t n_rows = h->n_rows;
    uint64_t eo = SL__SLCF_FIXED_BYTES + (uint64_t)c * h->entry_bytes;
    const uint8_t *e = p + eo;
    col->name_len = sl__get_u32(e + 4);
    if (col->name_len == 0 || col->name_len > SL__SLCF_MAX_NAME ||
        *name_off + col->name_len > header_bytes)
        return FAIL("'%s': column %u: name length %u at offset %llu is 0, too long or past "
                    "the header", path, c + 1, col->name_len, (unsigned long long)(eo + 4));
    col->name = p + *name_off;
    *name_off += col->name_len;
    int nl = (int)col->name_len;
    if (!entry_type(h->version, e, &col->type))
        return FAIL("'%s': column %u '%.*s': unknown type code 0x%08x at offset %llu", path,
                    c + 1, nl, col->name, sl__get_u32(e), (unsigned long long)eo);
    col->nulls = sl__get_u64(e + 8);
    col->voff = sl__get_u64(e + 16);
    col->vbytes = sl__get_u64(e + 24);
    col->boff = sl__get_u64(e + 32);
    col->bbytes = sl__get_u64(e + 40);
    col->vsum = sl__get_u64(e + 48);
    col->bsum = sl__get_u64(e + 56);
    if (h->version >= 2) {
        col->doff = sl__get_u64(e + 64);
        col->dbytes = sl__get_u64(e + 72);
        col->dsum = sl__get_u64(e + 80);
        col->dict_n = sl__get_u64(e + 88);
    }
    if (n_rows > (uint64_t)INT64_MAX / 16)
        return FAIL("'%s': row count %llu is too large", path, (unsigned long long)n_rows);
    uint64_t want_v = (uint64_t)sl__col_data_bytes(col->type, (int64_t)n_rows);
    if (col->vbytes != want_v)
        return FAIL("'%s': column %u '%.*s': values section has %llu bytes, but %llu rows of "
                    "%s need %llu", path, c + 1, nl, col->name, (unsigned long long)col->vbytes,
                    (unsigned long long)n_rows, sl_type_name(col->type),
                    (unsigned long long)want_v);
    if (col->nulls > n_rows)
        return FAIL("'%s': column %u '%.*s': null count %llu exceeds the row count %llu", path,
                    c + 1, nl, col->name, (unsigned long long)col->nulls,
                    (unsigned long long)n_rows);
    uint64_t want_b = col->nulls ? (n_rows + 7) / 8 : 0;
    if (col->bbytes != want_b)
        return FAIL("'%s': column %u '%.*s': validity section has %llu bytes, expected %llu",
                    path, c + 1, nl, col->name, (unsigned long long)col->bbytes,
                    (unsigned long long)want_b);
    bool strings = sl_type_is_string(col->type);
    if (!strings && (col->doff || col->dbytes || col->dict_n))
        return FAIL("'%s': column %u '%.*s': a %s column has a data section", path, c + 1, nl,
                    col->name, sl_type_name(col->type));
    if (col->type == SL_TYPE_DICT &&
        (col->dict_n >= INT32_MAX || col->dbytes < (col->dict_n + 1) * 4))
        return FAIL("'%s': column %u '%.*s': a dictionary of %llu strings in %llu bytes", path,
                    c + 1, nl, col->name, (unsigned long long)col->dict_n,
                    (unsigned long long)col->dbytes);
    uint64_t data_start = sl__align64(header_bytes);
    int rc = check_section(path, c, col, 0, col->voff, col->vbytes, data_start, size, err,
                           err_len);
    if (rc == SL_OK)
        rc = check_section(path, c, col, 1, col->boff, col->bbytes, data_start, size, err,
                           err_len);
    if (rc == SL_OK && strings)
        rc = check_section(path, c, col, 2, col->doff, col->dbytes, data_start, size, err,
                           err_len);
    return rc;
}

/* Validates the header of a mapped file (see docs/FILE_FORMAT.md for each rule) and
 * fills h (h->cols point into the mapping; the caller frees h->cols, also on failure).
 * SL_EFORMAT with a message on failure. */
static int slcf_read_header(const char *path, const uint8_t *p, uint64_t size,
                            struct slcf_header *h, char *err, size_t err_len)
{
    memset(h, 0, sizeof *h);
    int rc = check_fixed(path, p, size, err, err_len);
    if (rc != SL_OK)
        return rc;
    uint32_t n_cols = sl__get_u32(p + 8), header_bytes = sl__get_u32(p + 12);
    h->n_rows = sl__get_u64(p + 16);
    h->version = sl__get_u16(p + 4);
    h->entry_bytes = h->version == 1 ? SL__SLCF_ENTRY_BYTES_V1 : SL__SLCF_ENTRY_BYTES;
    h->cols = sl__calloc(n_cols, sizeof *h->cols);
    if (!h->cols) {
        snprintf(err, err_len, "out of memory");
        return SL_ENOMEM;
    }
    h->n_cols = n_cols;
    uint64_t name_off = SL__SLCF_FIXED_BYTES + (uint64_t)n_cols * h->entry_bytes;
    for (uint32_t c = 0; c < n_cols; c++) {
        struct slcf_col *col = &h->cols[c];
        rc = read_entry(path, p, size, c, h, header_bytes, &name_off, col, err, err_len);
        if (rc != SL_OK)
            return rc;
        for (uint32_t k = 0; k < c; k++) {
            if (h->cols[k].name_len == col->name_len &&
                memcmp(h->cols[k].name, col->name, col->name_len) == 0)
                return FAIL("'%s': columns %u and %u are both named '%.*s'", path, k + 1, c + 1,
                            (int)col->name_len, col->name);
        }
    }
    if (name_off != header_bytes)
        return FAIL("'%s': header size %u does not match its column names (%llu bytes)", path,
                    header_bytes, (unsigned long long)name_off);
    return SL_OK;
}

#undef FAIL

static int slcf_verify(const char *path, const uint8_t *p, const struct slcf_header *h, char *err,
                       size_t err_len)
{
    for (uint32_t c = 0; c < h->n_cols; c++) {
        const struct slcf_col *col = &h->cols[c];
        for (int v = 0; v < (sl_type_is_string(col->type) ? 3 : 2); v++) {
            uint64_t off = v == 2 ? col->doff : v ? col->boff : col->voff;
            uint64_t bytes = v == 2 ? col->dbytes : v ? col->bbytes : col->vbytes;
            uint64_t want = v == 2 ? col->dsum : v ? col->bsum : col->vsum;
            uint64_t got = sl__xxh64(p + off, (size_t)bytes);
            if (got != want) {
                snprintf(err, err_len, "'%s': column %u '%.*s': %s section [%llu, +%llu) "
                         "checksum mismatch: stored %016llx, computed %016llx", path, c + 1,
                         (int)col->name_len, col->name, sec_name(v), (unsigned long long)off,
                         (unsigned long long)bytes, (unsigned long long)want,
                         (unsigned long long)got);
                return SL_EFORMAT;
            }
        }
    }
    return SL_OK;
}

/* ---------------- values ---------------- */

/* Checks what the layout alone does not: string offsets start at 0, never decrease and
 * end at the data section's size; strings are valid UTF-8; dictionary codes lie in the
 * dictionary; booleans are 0 or 1; decimals of precision <= 18 have at most that many
 * digits. Null rows are not checked (their values mean nothing). A file that passes
 * can be read without any out-of-bounds access. */
struct vcheck {
    const char *path;
    uint32_t c;
    const struct slcf_col *col;
    char *err;
    size_t err_len;
};

static int vfail(const struct vcheck *v, uint64_t row, const char *what)
{
    snprintf(v->err, v->err_len, "'%s': column %u '%.*s': row %llu: %s", v->path, v->c + 1,
             (int)v->col->name_len, v->col->name, (unsigned long long)row, what);
    return SL_EFORMAT;
}

static bool row_valid(const uint8_t *bits, uint64_t r)
{
    return !bits || ((bits[r >> 3] >> (r & 7)) & 1);
}

/* n strings given by n + 1 offsets (int32 or int64) into bytes[0, nbytes). */
static int check_strings(const struct vcheck *v, const uint8_t *offs, bool large, uint64_t n,
                         const uint8_t *bytes, uint64_t nbytes, const uint8_t *bits,
                         const char *what)
{
    int64_t prev = large ? ((const int64_t *)offs)[0] : ((const int32_t *)offs)[0];
    if (prev != 0)
        return vfail(v, 0, "the first string offset is not 0");
    for (uint64_t r = 0; r < n; r++) {
        int64_t o = large ? ((const int64_t *)offs)[r + 1] : ((const int32_t *)offs)[r + 1];
        if (o < prev || (uint64_t)o > nbytes)
            return vfail(v, r, "a string offset decreases or passes the data section");
        size_t bad;
        if (row_valid(bits, r) &&
            !sl__utf8_valid((const char *)bytes + prev, (size_t)(o - prev), &bad))
            return vfail(v, r, what);
        prev = o;
    }
    if ((uint64_t)prev != nbytes)
        return vfail(v, n, "the last string offset is not the data section's size");
    return SL_OK;
}

static int check_column_values(const struct vcheck *v, const uint8_t *p, uint64_t n)
{
    const struct slcf_col *col = v->col;
    const uint8_t *bits = col->nulls ? p + col->boff : NULL, *vals = p + col->voff;
    switch (SL_TYPE_ID(col->type)) {
    case SL_TYPE_BOOL:
        for (uint64_t r = 0; r < n; r++)
            if (row_valid(bits, r) && vals[r] > 1)
                return vfail(v, r, "a bool value is neither 0 nor 1");
        return SL_OK;
    case SL_TYPE_DECIMAL: {
        if (sl_type_width(col->type) != 8)
            return SL_OK;
        int64_t max = 1;
        for (int k = 0; k < sl_type_precision(col->type); k++)
            max *= 10;
        for (uint64_t r = 0; r < n; r++) {
            int64_t x = ((const int64_t *)vals)[r];
            if (row_valid(bits, r) && (x >= max || x <= -max))
                return vfail(v, r, "a decimal value has more digits than its precision");
        }
        return SL_OK;
    }
    case SL_TYPE_UTF8:
    case SL_TYPE_LARGE_UTF8:
        return check_strings(v, vals, col->type == SL_TYPE_LARGE_UTF8, n, p + col->doff,
                             col->dbytes, bits, "a string is not valid UTF-8");
    case SL_TYPE_DICT: {
        uint64_t dn = col->dict_n, head = (dn + 1) * 4;
        int rc = check_strings(v, p + col->doff, false, dn, p + col->doff + head,
                               col->dbytes - head, NULL, "a dictionary string is not valid "
                               "UTF-8 (the row is its index in the dictionary)");
        for (uint64_t r = 0; rc == SL_OK && r < n; r++) {
            int32_t code = ((const int32_t *)vals)[r];
            if (row_valid(bits, r) && (code < 0 || (uint64_t)code >= dn))
                rc = vfail(v, r, "a dictionary code is out of the dictionary's range");
        }
        return rc;
    }
    default:
        return SL_OK;
    }
}

static int slcf_check_values(const char *path, const uint8_t *p, const struct slcf_header *h,
                             char *err, size_t err_len)
{
    for (uint32_t c = 0; c < h->n_cols; c++) {
        struct vcheck v = {path, c, &h->cols[c], err, err_len};
        int rc = check_column_values(&v, p, h->n_rows);
        if (rc != SL_OK)
            return rc;
    }
    return SL_OK;
}

/* The dictionary of DICT column col, over the mapping (no copy). */
static struct sl__dict *map_dictionary(struct sl__fmap *m, const struct slcf_col *col)
{
    struct sl__dict *d = sl__calloc(1, sizeof *d);
    if (!d)
        return NULL;
    atomic_init(&d->refs, 1);
    d->n = (int64_t)col->dict_n;
    uint64_t head = (col->dict_n + 1) * 4;
    d->offsets = sl__fmap_buf(m, col->doff, head);
    if (col->dbytes > head)
        d->chars = sl__fmap_buf(m, col->doff + head, col->dbytes - head);
    if (!d->offsets || (col->dbytes > head && !d->chars)) {
        sl__dict_unref(d);
        return NULL;
    }
    return d;
}

/* ---------------- bind ---------------- */

static void bin_data_free(void *p)
{
    struct bin_data *d = p;
    sl__free_str(d->path);
    sl__collist_free(&d->file_cols);
    sl__free(d->file_col, 0);
    sl__expr_free(d->where);
    sl__free(d, sizeof *d);
}

/* Copies the file's column names and types into d->file_cols. */
static int keep_columns(struct bin_data *d, const struct slcf_header *h)
{
    d->file_cols.names = sl__calloc(h->n_cols, sizeof *d->file_cols.names);
    d->file_cols.types = sl__calloc(h->n_cols, sizeof *d->file_cols.types);
    if (!d->file_cols.names || !d->file_cols.types)
        return SL_ENOMEM;
    for (uint32_t c = 0; c < h->n_cols; c++) {
        char *s = sl__malloc(h->cols[c].name_len + 1);
        if (!s)
            return SL_ENOMEM;
        memcpy(s, h->cols[c].name, h->cols[c].name_len);
        s[h->cols[c].name_len] = 0;
        d->file_cols.names[d->file_cols.n] = s;
        d->file_cols.types[d->file_cols.n++] = h->cols[c].type;
    }
    return SL_OK;
}

static int bind_columns(sl_bind_t *b, struct bin_data *d, const char *proj)
{
    int rc;
    struct sl__collist s = {0};
    char err[256];
    if (*proj && (rc = sl__collist_parse(proj, 0, &s, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "columns: %s", err);
    d->n_out = *proj ? s.n : d->file_cols.n;
    d->file_col = sl__malloc((size_t)d->n_out * sizeof *d->file_col);
    if (!d->file_col) {
        sl__collist_free(&s);
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    }
    rc = SL_OK;
    for (int k = 0; k < d->n_out && rc >= 0; k++) {
        int f = k;
        if (*proj) {
            f = -1;
            for (int i = 0; i < d->file_cols.n && f < 0; i++)
                f = strcmp(d->file_cols.names[i], s.names[k]) == 0 ? i : -1;
            if (f < 0) {
                rc = sl_bind_fail(b, SL_ENOTFOUND, "columns: '%s' has no column '%s'", d->path,
                                  s.names[k]);
                break;
            }
        }
        d->file_col[k] = f;
        rc = sl_bind_add_column(b, d->file_cols.names[f], d->file_cols.types[f]);
    }
    sl__collist_free(&s);
    return rc;
}

static int bin_bind(sl_bind_t *b)
{
    const char *path, *proj;
    int verify, rc;
    if ((rc = sl_bind_option_str(b, "path", &path)) < 0 ||
        (rc = sl_bind_option_str(b, "columns", &proj)) < 0 ||
        (rc = sl_bind_option_bool(b, "verify", &verify)) < 0)
        return rc;
    struct bin_data *d = sl__calloc(1, sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, d, bin_data_free);
    d->verify = verify;
    if (!(d->path = sl__strdup(path)))
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    char err[512];
    struct sl__fmap *m;
    /* Bind reads only the header: the fixed part says how long it is. */
    if ((rc = sl__fmap_open(path, SL__SLCF_FIXED_BYTES, &m, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "%s", err);
    if (m->bytes == SL__SLCF_FIXED_BYTES && sl__get_u32(m->base + 12) > m->bytes) {
        uint32_t header_bytes = sl__get_u32(m->base + 12);
        sl__fmap_unref(m);
        if ((rc = sl__fmap_open(path, header_bytes, &m, err, sizeof err)) < 0)
            return sl_bind_fail(b, rc, "%s", err);
    }
    struct slcf_header h;
    rc = slcf_read_header(path, m->base, m->file_bytes, &h, err, sizeof err);
    if (rc >= 0 && keep_columns(d, &h) < 0) {
        rc = SL_ENOMEM;
        snprintf(err, sizeof err, "out of memory");
    }
    sl__free(h.cols, 0);
    sl__fmap_unref(m);
    if (rc < 0)
        return sl_bind_fail(b, rc, "%s", err);
    sl_bind_set_rows(b, (int64_t)h.n_rows);
    const char *where;
    if ((rc = bind_columns(b, d, proj)) < 0 || (rc = sl_bind_option_str(b, "where", &where)) < 0)
        return rc;
    return sl__pred_bind(b, where, &d->where);
}

/* ---------------- run ---------------- */

static void bin_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct bin_global *g = gs;
    for (uint32_t c = 0; g->dicts && c < g->h.n_cols; c++)
        sl__dict_unref(g->dicts[c]);
    sl__free(g->dicts, 0);
    sl__free(g->h.cols, 0);
    sl__fmap_unref(g->map);
}

static int64_t bin_tasks(sl_task_t *t)
{
    const struct bin_data *d = sl_op_data(sl_task_op(t));
    struct bin_global *g = sl_task_gstate(t);
    char err[512];
    int rc = sl__fmap_open(d->path, UINT64_MAX, &g->map, err, sizeof err);
    if (rc >= 0)
        rc = slcf_read_header(d->path, g->map->base, g->map->bytes, &g->h, err, sizeof err);
    if (rc >= 0) {
        /* The schema was fixed at bind time: the file must still have it. */
        int same = (int)g->h.n_cols == d->file_cols.n;
        for (int c = 0; same && c < d->file_cols.n; c++) {
            const struct slcf_col *col = &g->h.cols[c];
            same = col->type == d->file_cols.types[c] &&
                   col->name_len == strlen(d->file_cols.names[c]) &&
                   memcmp(col->name, d->file_cols.names[c], col->name_len) == 0;
        }
        if (!same) {
            rc = SL_EFORMAT;
            snprintf(err, sizeof err, "'%s': its columns changed since the plan was built",
                     d->path);
        }
    }
    if (rc >= 0 && d->verify)
        rc = slcf_verify(d->path, g->map->base, &g->h, err, sizeof err);
    if (rc >= 0)
        rc = slcf_check_values(d->path, g->map->base, &g->h, err, sizeof err);
    if (rc >= 0 && !(g->dicts = sl__calloc(g->h.n_cols, sizeof *g->dicts)))
        rc = SL_ENOMEM;
    for (uint32_t c = 0; rc >= 0 && c < g->h.n_cols; c++) {
        if (g->h.cols[c].type == SL_TYPE_DICT &&
            !(g->dicts[c] = map_dictionary(g->map, &g->h.cols[c])))
            rc = SL_ENOMEM;
    }
    if (rc == SL_ENOMEM)
        snprintf(err, sizeof err, "out of memory");
    if (rc < 0)
        return sl_task_fail(t, rc, "%s", err);
    g->morsel = sl_task_morsel_rows(t);
    sl__rank_share(t, (int64_t)g->h.n_rows, &g->lo, &g->hi);
    return (g->hi - g->lo + g->morsel - 1) / g->morsel;
}

static int bin_source(sl_task_t *t)
{
    const struct bin_data *d = sl_op_data(sl_task_op(t));
    struct bin_global *g = sl_task_gstate(t);
    int64_t first = g->lo + sl_task_index(t) * g->morsel;
    int64_t n = sl__morsel_len(g->hi - g->lo, g->morsel, sl_task_index(t));
    sl_batch_t *b = sl__batch_new(sl_op_output_schema(sl_task_op(t)), n);
    if (!b)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    for (int k = 0; k < d->n_out; k++) {
        const struct slcf_col *col = &g->h.cols[d->file_col[k]];
        struct sl__col *out = &b->cols[k];
        out->offset = first;
        out->data = sl__fmap_buf(g->map, col->voff, col->vbytes);
        if (col->nulls) {
            out->validity = sl__fmap_buf(g->map, col->boff, col->bbytes);
            out->null_count = -1;
        }
        if (col->type == SL_TYPE_UTF8 || col->type == SL_TYPE_LARGE_UTF8)
            out->chars = col->dbytes ? sl__fmap_buf(g->map, col->doff, col->dbytes) : NULL;
        if (col->type == SL_TYPE_DICT) {
            out->dict = g->dicts[d->file_col[k]];
            sl__dict_ref(out->dict);
        }
        if (!out->data || (col->nulls && !out->validity) || (col->dbytes && !out->dict &&
                                                             !out->chars)) {
            sl_batch_unref(b);
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
    }
    sl_task_progress(t, n, n * (int64_t)d->n_out * 8);
    if (d->where) { /* the predicate runs here, before the rows leave the scan */
        struct sl__pred_state ps = {0};
        sl_batch_t *kept;
        int rc = sl__pred_apply(t, d->where, &ps, b, &kept);
        sl__pred_state_fini(&ps);
        sl_batch_unref(b);
        if (rc < 0 || !kept)
            return rc;
        b = kept;
    }
    return sl_task_emit(t, b);
}

static const struct sl_impl source_impls[] = {{.device = SL_DEVICE_CPU, .run = bin_source}};
static const struct sl_phase source_phase = {source_impls, 1, sl__cost_linear};

const struct sl_op_def sl__scan_bin_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SOURCE,
    .name = "scan.bin",
    .doc = "reads an SLCF binary column file in parallel morsels (zero-copy, mapped)",
    .min_inputs = 0,
    .max_inputs = 0,
    .options = bin_options,
    .n_options = sizeof bin_options / sizeof bin_options[0],
    .bind = bin_bind,
    .global_state_bytes = sizeof(struct bin_global),
    .fini_global = bin_fini_global,
    .source_tasks = bin_tasks,
    .source = &source_phase,
};
