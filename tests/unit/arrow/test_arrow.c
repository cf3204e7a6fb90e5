/* Tests the Arrow C Data, C Stream and C Device Data interfaces (runtime/arrow/):
 * export/import round trips with nulls, slices and bit offsets, unaligned foreign
 * buffers, zero-copy sharing and when foreign release callbacks run, zero-length and
 * zero-column arrays, rejection of unsupported and malformed input (which must stay
 * owned by the caller), streams, device arrays, and allocation-failure injection;
 * every case ends with the allocator's live counters back at zero. */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static int64_t live_allocs(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    return c.live_allocs;
}

static void assert_no_leaks(void)
{
    assert_int_equal(live_allocs(), 0);
}

static bool bit(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static void set_bit(uint8_t *bits, int64_t i, bool v)
{
    if (v)
        bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* ---------------- a foreign producer ----------------
 * Hand-built arrays over memory the test owns, with release callbacks that count how
 * often they run. The struct must stay put until the imported batch is gone. */

#define FAKE_MAX_COLS 4

struct fake {
    int array_releases;  /* top-level array release calls */
    int child_releases;  /* child array release calls */
    int schema_releases; /* top-level schema release calls */
    int64_t n_cols;
    const void *top_bufs[1];
    struct ArrowArray kids[FAKE_MAX_COLS];
    struct ArrowArray *kid_ptrs[FAKE_MAX_COLS];
    const void *kid_bufs[FAKE_MAX_COLS][2];
    struct ArrowSchema skids[FAKE_MAX_COLS];
    struct ArrowSchema *skid_ptrs[FAKE_MAX_COLS];
    struct ArrowArray array; /* what the test hands to the importer */
    struct ArrowSchema schema;
};

static void fake_child_release(struct ArrowArray *a)
{
    struct fake *f = a->private_data;
    f->child_releases++;
    a->release = NULL;
}

static void fake_array_release(struct ArrowArray *a)
{
    struct fake *f = a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        if (a->children[i] && a->children[i]->release)
            a->children[i]->release(a->children[i]);
    }
    f->array_releases++;
    a->release = NULL;
}

static void fake_field_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

static void fake_schema_release(struct ArrowSchema *s)
{
    struct fake *f = s->private_data;
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i]->release)
            s->children[i]->release(s->children[i]);
    }
    f->schema_releases++;
    s->release = NULL;
}

/* A struct array of `length` rows at `offset`, with no columns yet. */
static void fake_init(struct fake *f, int64_t length, int64_t offset)
{
    memset(f, 0, sizeof *f);
    f->array = (struct ArrowArray){
        .length = length,
        .offset = offset,
        .null_count = 0,
        .n_buffers = 1,
        .buffers = f->top_bufs,
        .children = f->kid_ptrs,
        .release = fake_array_release,
        .private_data = f,
    };
    f->schema = (struct ArrowSchema){
        .format = "+s",
        .name = "",
        .children = f->skid_ptrs,
        .release = fake_schema_release,
        .private_data = f,
    };
}

static struct ArrowArray *fake_add(struct fake *f, const char *name, const char *format,
                                   int64_t length, int64_t offset, int64_t null_count,
                                   const uint8_t *validity, const void *data)
{
    int64_t i = f->n_cols++;
    assert_true(i < FAKE_MAX_COLS);
    f->kid_bufs[i][0] = validity;
    f->kid_bufs[i][1] = data;
    f->kids[i] = (struct ArrowArray){
        .length = length,
        .offset = offset,
        .null_count = null_count,
        .n_buffers = 2,
        .buffers = f->kid_bufs[i],
        .release = fake_child_release,
        .private_data = f,
    };
    f->kid_ptrs[i] = &f->kids[i];
    f->skids[i] = (struct ArrowSchema){
        .format = format,
        .name = name,
        .flags = ARROW_FLAG_NULLABLE,
        .release = fake_field_release,
        .private_data = f,
    };
    f->skid_ptrs[i] = &f->skids[i];
    f->array.n_children = f->schema.n_children = f->n_cols;
    return &f->kids[i];
}

/* Source data for foreign arrays: 64 rows of each type and a validity pattern. */
#define SRC_ROWS 64
static int32_t src_i32[SRC_ROWS];
static int64_t src_i64[SRC_ROWS];
static float src_f32[SRC_ROWS];
static double src_f64[SRC_ROWS];
static uint8_t src_bits[SRC_ROWS / 8]; /* row i valid unless i % 3 == 1 */

static void src_init(void)
{
    for (int i = 0; i < SRC_ROWS; i++) {
        src_i32[i] = i * 3 - 7;
        src_i64[i] = (int64_t)i * 1000000007LL;
        src_f32[i] = (float)i * 0.25f;
        src_f64[i] = i * -1.5;
        set_bit(src_bits, i, i % 3 != 1);
    }
}

static int64_t src_nulls(int64_t off, int64_t len)
{
    int64_t n = 0;
    for (int64_t i = off; i < off + len; i++)
        n += !bit(src_bits, i);
    return n;
}

/* Asserts that column `col` of b holds rows [src_off, src_off + rows) of `vals`, with
 * validity from `bits` (NULL: all valid). Compares values of valid rows only. */
static void expect_column(const sl_batch_t *b, int col, const void *vals, size_t width,
                          const uint8_t *bits, int64_t src_off)
{
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(b, col, &c));
    assert_int_equal(sl_type_width(c.type), width);
    for (int64_t r = 0; r < c.length; r++) {
        bool want = bits ? bit(bits, src_off + r) : true;
        bool got = c.validity ? bit(c.validity, c.offset + r) : true;
        if (want != got)
            fail_msg("column %d row %lld: valid %d, expected %d", col, (long long)r, got, want);
        if (!want)
            continue;
        const char *g = (const char *)c.data + (size_t)(c.offset + r) * width;
        const char *w = (const char *)vals + (size_t)(src_off + r) * width;
        if (memcmp(g, w, width) != 0)
            fail_msg("column %d row %lld: value differs", col, (long long)r);
    }
}

/* Asserts two batches hold the same names, types, rows, validity and valid values. */
static void assert_batches_equal(const sl_batch_t *a, const sl_batch_t *b)
{
    assert_int_equal(sl_batch_num_columns(a), sl_batch_num_columns(b));
    assert_int_equal(sl_batch_num_rows(a), sl_batch_num_rows(b));
    for (int i = 0; i < sl_batch_num_columns(a); i++) {
        struct sl_column ca, cb;
        SL_ASSERT_OK(sl_batch_column(a, i, &ca));
        SL_ASSERT_OK(sl_batch_column(b, i, &cb));
        assert_string_equal(ca.name, cb.name);
        assert_int_equal(ca.type, cb.type);
        size_t w = sl_type_width(ca.type);
        for (int64_t r = 0; r < ca.length; r++) {
            bool va = ca.validity ? bit(ca.validity, ca.offset + r) : true;
            bool vb = cb.validity ? bit(cb.validity, cb.offset + r) : true;
            if (va != vb)
                fail_msg("column %d row %lld: validity %d vs %d", i, (long long)r, va, vb);
            if (va && memcmp((const char *)ca.data + (size_t)(ca.offset + r) * w,
                             (const char *)cb.data + (size_t)(cb.offset + r) * w, w) != 0)
                fail_msg("column %d row %lld: values differ", i, (long long)r);
        }
    }
}

/* A sluice batch of n rows: a int32, b int64 (every 3rd null), c float64 (every 5th
 * null), d float32. */
static sl_batch_t *make_batch(int64_t n, int seed)
{
    const char *names[] = {"a", "b", "c", "d"};
    enum sl_type types[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_FLOAT64, SL_TYPE_FLOAT32};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 4, names, types, n));
    int32_t *a = sl_batch_column_data(b, 0);
    int64_t *l = sl_batch_column_data(b, 1);
    double *g = sl_batch_column_data(b, 2);
    float *f = sl_batch_column_data(b, 3);
    uint8_t *lv = sl_batch_column_validity(b, 1);
    uint8_t *gv = sl_batch_column_validity(b, 2);
    assert_non_null(lv);
    assert_non_null(gv);
    for (int64_t i = 0; i < n; i++) {
        a[i] = (int32_t)(i * 7 + seed);
        l[i] = i * -3 - seed;
        g[i] = (double)i / 4.0 + seed;
        f[i] = (float)i * 2.0f - (float)seed;
        set_bit(lv, i, i % 3 != 0);
        set_bit(gv, i, i % 5 != 2);
    }
    return b;
}

/* ---------------- export/import round trips ---------------- */

SL_TEST(roundtrip_with_nulls)
{
    sl_batch_t *b = make_batch(100, 1);
    struct ArrowArray arr;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_arrow(b, &arr, &sch));

    /* The exported layout follows the spec and shares sluice's buffers. */
    assert_string_equal(sch.format, "+s");
    assert_int_equal(sch.n_children, 4);
    assert_string_equal(sch.children[1]->name, "b");
    assert_string_equal(sch.children[0]->format, "i");
    assert_string_equal(sch.children[1]->format, "l");
    assert_string_equal(sch.children[2]->format, "g");
    assert_string_equal(sch.children[3]->format, "f");
    assert_true(sch.children[2]->flags & ARROW_FLAG_NULLABLE);
    assert_int_equal(arr.length, 100);
    assert_int_equal(arr.n_buffers, 1);
    assert_int_equal(arr.n_children, 4);
    assert_int_equal(arr.children[1]->n_buffers, 2);
    assert_null(arr.children[0]->buffers[0]);
    assert_int_equal(arr.children[0]->null_count, 0);
    assert_non_null(arr.children[1]->buffers[0]);
    struct sl_column cb;
    SL_ASSERT_OK(sl_batch_column(b, 1, &cb));
    assert_ptr_equal(arr.children[1]->buffers[1], cb.data);

    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
    assert_null(arr.release); /* moved */
    assert_null(sch.release);
    assert_batches_equal(b, r);
    struct sl_column cr;
    SL_ASSERT_OK(sl_batch_column(r, 1, &cr));
    assert_ptr_equal(cr.data, cb.data); /* zero-copy both ways */
    assert_null(sl_batch_column_data(r, 0)); /* imported data is read-only */

    /* The import keeps the original buffers alive. */
    sl_batch_t *copy = make_batch(100, 1);
    sl_batch_unref(b);
    assert_batches_equal(copy, r);
    sl_batch_unref(copy);
    sl_batch_unref(r);
    assert_no_leaks();
}

SL_TEST(roundtrip_sliced)
{
    sl_batch_t *b = make_batch(100, 2);
    sl_batch_t *s = sl__batch_slice(b, 13, 50); /* bit offset 13: not a byte boundary */
    assert_non_null(s);
    struct ArrowArray arr;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_arrow(s, &arr, &sch));
    assert_int_equal(arr.length, 50);
    assert_int_equal(arr.children[1]->offset, 13); /* offset exported, not copied */
    assert_int_equal(arr.children[1]->length, 50);
    struct sl_column cb;
    SL_ASSERT_OK(sl_batch_column(b, 1, &cb));
    assert_ptr_equal(arr.children[1]->buffers[1], cb.data);
    assert_ptr_equal(arr.children[1]->buffers[0], cb.validity);

    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
    assert_batches_equal(s, r);
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(r, 2, &c));
    assert_int_equal(c.offset, 13);
    assert_false(bit(c.validity, c.offset + 4)); /* row 17 of b: 17 % 5 == 2, a null */
    assert_true(bit(c.validity, c.offset + 5));
    sl_batch_unref(b);
    sl_batch_unref(s);
    sl_batch_unref(r);
    assert_no_leaks();
}

SL_TEST(import_child_offsets_and_bit_offsets)
{
    src_init();
    struct fake f;
    fake_init(&f, 20, 0);
    fake_add(&f, "i", "i", 20, 3, -1, src_bits, src_i32);
    fake_add(&f, "l", "l", 20, 11, src_nulls(11, 20), src_bits, src_i64);
    fake_add(&f, "f", "f", 20, 5, 0, NULL, src_f32);
    fake_add(&f, "g", "g", 25, 37, -1, src_bits, src_f64); /* longer than needed */
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
    assert_int_equal(f.schema_releases, 1);
    assert_int_equal(sl_batch_num_rows(b), 20);
    expect_column(b, 0, src_i32, 4, src_bits, 3);
    expect_column(b, 1, src_i64, 8, src_bits, 11);
    expect_column(b, 2, src_f32, 4, NULL, 5);
    expect_column(b, 3, src_f64, 8, src_bits, 37);
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(b, 1, &c));
    assert_int_equal(c.null_count, src_nulls(11, 20));
    assert_ptr_equal(c.data, src_i64); /* zero-copy: the foreign pointer itself */
    assert_int_equal(c.offset, 11);
    assert_string_equal(c.name, "l");
    SL_ASSERT_OK(sl_batch_column(b, 3, &c));
    assert_int_equal(c.null_count, -1); /* the array is longer than the batch */
    assert_int_equal(f.array_releases, 0);
    sl_batch_unref(b);
    assert_int_equal(f.array_releases, 1);
    assert_int_equal(f.child_releases, 4);
    assert_no_leaks();
}

SL_TEST(import_struct_offset)
{
    src_init();
    struct fake f;
    fake_init(&f, 10, 5); /* the struct's offset adds to each child's */
    fake_add(&f, "i", "i", 30, 3, src_nulls(3, 30), src_bits, src_i32);
    fake_add(&f, "g", "g", 15, 0, 0, NULL, src_f64);
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
    assert_int_equal(sl_batch_num_rows(b), 10);
    expect_column(b, 0, src_i32, 4, src_bits, 8);
    expect_column(b, 1, src_f64, 8, NULL, 5);
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(b, 0, &c));
    assert_int_equal(c.offset, 8);
    assert_int_equal(c.null_count, -1); /* the child's count covers other rows too */

    /* Export it again: the offset travels, nothing is copied. */
    struct ArrowArray arr;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_arrow(b, &arr, &sch));
    assert_int_equal(arr.children[0]->offset, 8);
    assert_ptr_equal(arr.children[0]->buffers[1], src_i32);
    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
    sl_batch_unref(b);
    assert_int_equal(f.array_releases, 0); /* r still shares the foreign buffers */
    expect_column(r, 0, src_i32, 4, src_bits, 8);
    sl_batch_unref(r);
    assert_int_equal(f.array_releases, 1);
    assert_no_leaks();
}

SL_TEST(import_unaligned_buffers)
{
    src_init();
    /* Storage deliberately misaligned: data at +4 bytes, validity at +1. */
    _Alignas(64) static unsigned char raw_l[8 * SRC_ROWS + 8];
    _Alignas(64) static unsigned char raw_g[8 * SRC_ROWS + 8];
    _Alignas(64) static unsigned char raw_v[SRC_ROWS / 8 + 1];
    memcpy(raw_l + 4, src_i64, sizeof src_i64);
    memcpy(raw_g + 4, src_f64, sizeof src_f64);
    memcpy(raw_v + 1, src_bits, sizeof src_bits);
    struct fake f;
    fake_init(&f, 40, 0);
    fake_add(&f, "l", "l", 40, 9, -1, raw_v + 1, raw_l + 4);
    fake_add(&f, "g", "g", 40, 1, src_nulls(1, 40), raw_v + 1, raw_g + 4);
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(b, 0, &c));
    assert_ptr_equal(c.data, raw_l + 4);
    assert_true((uintptr_t)c.data % 8 == 4);
    expect_column(b, 0, src_i64, 8, src_bits, 9);
    expect_column(b, 1, src_f64, 8, src_bits, 1);
    sl_batch_unref(b);
    assert_int_equal(f.array_releases, 1);
    assert_no_leaks();
}

SL_TEST(import_primitive_array)
{
    src_init();
    struct fake f;
    fake_init(&f, 0, 0);
    struct ArrowArray *a = fake_add(&f, "x", "l", 12, 6, -1, src_bits, src_i64);
    /* Hand over the child on its own, as a top-level primitive array. */
    struct ArrowArray top = *a;
    top.release = fake_array_release;
    top.n_children = 0;
    struct ArrowSchema sch = f.skids[0];
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&top, &sch, &b));
    assert_null(top.release);
    assert_null(sch.release);
    assert_int_equal(sl_batch_num_columns(b), 1);
    assert_int_equal(sl_batch_num_rows(b), 12);
    assert_int_equal(sl_batch_column_index(b, "x"), 0);
    expect_column(b, 0, src_i64, 8, src_bits, 6);
    sl_batch_unref(b);
    assert_int_equal(f.array_releases, 1);
    assert_no_leaks();
}

/* ---------------- ownership and release ---------------- */

SL_TEST(release_once_after_last_reference)
{
    src_init();
    struct fake f;
    fake_init(&f, 30, 0);
    fake_add(&f, "i", "i", 30, 0, src_nulls(0, 30), src_bits, src_i32);
    fake_add(&f, "g", "g", 30, 0, 0, NULL, src_f64);
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
    assert_null(f.array.release);
    assert_int_equal(f.schema_releases, 1);

    sl_batch_ref(b);
    sl_batch_t *s = sl__batch_slice(b, 4, 10);
    assert_non_null(s);
    struct ArrowArray out;
    struct ArrowSchema out_s;
    SL_ASSERT_OK(sl_batch_export_arrow(s, &out, &out_s));
    out_s.release(&out_s);

    sl_batch_unref(b);
    sl_batch_unref(b);
    assert_int_equal(f.array_releases, 0);
    sl_batch_unref(s);
    assert_int_equal(f.array_releases, 0); /* the exported array still shares it */
    assert_int_equal(out.children[1]->offset, 4);
    assert_true(((const double *)out.children[1]->buffers[1])[4 + 3] == src_f64[7]);
    out.release(&out);
    assert_null(out.release);
    assert_int_equal(f.array_releases, 1);
    assert_int_equal(f.child_releases, 2);
    assert_no_leaks();
}

SL_TEST(release_at_once_without_buffers)
{
    struct fake f;
    fake_init(&f, 7, 0); /* no columns: nothing keeps the foreign array */
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
    assert_int_equal(f.array_releases, 1);
    assert_int_equal(sl_batch_num_columns(b), 0);
    assert_int_equal(sl_batch_num_rows(b), 7);
    struct ArrowArray arr;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_arrow(b, &arr, &sch));
    assert_int_equal(arr.n_children, 0);
    assert_int_equal(arr.length, 7);
    sl_batch_unref(b);
    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
    assert_int_equal(sl_batch_num_rows(r), 7);
    sl_batch_unref(r);
    assert_int_equal(f.array_releases, 1);
    assert_no_leaks();
}

SL_TEST(export_child_moved_out)
{
    sl_batch_t *b = make_batch(20, 3);
    struct ArrowArray arr;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_arrow(b, &arr, &sch));
    sl_batch_unref(b);
    /* Move child 1 and its schema out, then release the parents first. */
    struct ArrowArray child = *arr.children[1];
    arr.children[1]->release = NULL;
    struct ArrowSchema child_s = *sch.children[1];
    sch.children[1]->release = NULL;
    arr.release(&arr);
    sch.release(&sch);
    assert_null(arr.release);
    assert_null(sch.release);
    assert_string_equal(child_s.name, "b");
    assert_int_equal(child.length, 20);
    const int64_t *v = child.buffers[1];
    assert_int_equal(v[5], 5 * -3 - 3);
    assert_false(bit(child.buffers[0], 6));
    child.release(&child);
    child_s.release(&child_s);
    assert_null(child.release);
    assert_no_leaks();
}

SL_TEST(zero_length)
{
    struct fake f;
    fake_init(&f, 0, 0);
    fake_add(&f, "i", "i", 0, 0, 0, NULL, NULL); /* NULL buffers: zero bytes */
    fake_add(&f, "g", "g", 0, 0, -1, NULL, NULL);
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
    assert_int_equal(sl_batch_num_rows(b), 0);
    assert_int_equal(sl_batch_num_columns(b), 2);
    assert_int_equal(f.array_releases, 1); /* no buffer points into it */
    struct ArrowArray arr;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_arrow(b, &arr, &sch));
    assert_int_equal(arr.length, 0);
    assert_int_equal(arr.children[0]->length, 0);
    sl_batch_unref(b);
    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
    assert_int_equal(sl_batch_num_rows(r), 0);
    sl_batch_unref(r);

    /* A sluice batch of zero rows round trips too. */
    sl_batch_t *e = make_batch(0, 0);
    SL_ASSERT_OK(sl_batch_export_arrow(e, &arr, &sch));
    SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
    assert_batches_equal(e, r);
    sl_batch_unref(e);
    sl_batch_unref(r);
    assert_no_leaks();
}

/* ---------------- rejected input ---------------- */

/* Asserts the caller still owns f (nothing moved, nothing released), then releases it
 * as the caller must. */
static void release_unmoved(struct fake *f)
{
    assert_non_null(f->array.release);
    assert_non_null(f->schema.release);
    assert_int_equal(f->array_releases, 0);
    assert_int_equal(f->schema_releases, 0);
    f->array.release(&f->array);
    f->schema.release(&f->schema);
    assert_int_equal(f->array_releases, 1);
    assert_int_equal(f->schema_releases, 1);
}

/* Imports f and expects `code`, with nothing moved or released; then releases. */
static void expect_rejected(struct fake *f, int code, const char *msg_part)
{
    sl_batch_t *b = (sl_batch_t *)1;
    int rc = sl_batch_import_arrow(&f->array, &f->schema, &b);
    if (rc != code)
        fail_msg("expected %s, got %s: %s", sl_err_name(code), sl_err_name(rc),
                 sl_last_errmsg());
    assert_null(b);
    if (msg_part && !strstr(sl_last_errmsg(), msg_part))
        fail_msg("message '%s' lacks '%s'", sl_last_errmsg(), msg_part);
    release_unmoved(f);
    assert_no_leaks();
}

SL_TEST(unsupported_formats)
{
    src_init();
    static const char *const formats[] = {"z", "tdm", "tsu:UTC", "+l", "ii", "", "d:10,2,256",
                                          "d:40,2", "n"};
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
        struct fake f;
        fake_init(&f, 4, 0);
        fake_add(&f, "ok", "i", 4, 0, 0, NULL, src_i32);
        fake_add(&f, "strange", formats[k], 4, 0, 0, NULL, src_i32);
        char want[64];
        snprintf(want, sizeof want, "'%s'", formats[k]);
        expect_rejected(&f, SL_EUNSUPPORTED, want);
        assert_non_null(strstr(sl_last_errmsg(), "strange"));
    }
    /* Dictionary-encoded columns. */
    struct fake f;
    fake_init(&f, 4, 0);
    fake_add(&f, "dict", "i", 4, 0, 0, NULL, src_i32);
    struct ArrowSchema dict = {.format = "z", .release = fake_field_release};
    f.skids[0].dictionary = &dict;
    expect_rejected(&f, SL_EUNSUPPORTED, "dictionary");
    /* A top-level non-struct type sluice lacks. */
    fake_init(&f, 4, 0);
    f.schema.format = "+m";
    expect_rejected(&f, SL_EUNSUPPORTED, "+m");
}

SL_TEST(struct_level_nulls)
{
    src_init();
    static uint8_t all_valid[2] = {0xff, 0xff};
    struct fake f;
    fake_init(&f, 10, 0);
    fake_add(&f, "i", "i", 10, 0, 0, NULL, src_i32);
    f.top_bufs[0] = src_bits;
    f.array.null_count = src_nulls(0, 10);
    expect_rejected(&f, SL_EUNSUPPORTED, "null rows");
    fake_init(&f, 10, 0);
    fake_add(&f, "i", "i", 10, 0, 0, NULL, src_i32);
    f.top_bufs[0] = src_bits;
    f.array.null_count = -1; /* counted: there are nulls */
    expect_rejected(&f, SL_EUNSUPPORTED, "null rows");

    /* A bitmap without nulls is fine, whether the count is given or counted. */
    for (int64_t nc = -1; nc <= 0; nc++) {
        fake_init(&f, 10, 3);
        fake_add(&f, "i", "i", 13, 0, 0, NULL, src_i32);
        f.top_bufs[0] = all_valid;
        f.array.null_count = nc;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_import_arrow(&f.array, &f.schema, &b));
        expect_column(b, 0, src_i32, 4, NULL, 3);
        sl_batch_unref(b);
        assert_int_equal(f.array_releases, 1);
    }
    assert_no_leaks();
}

SL_TEST(malformed_arrays)
{
    src_init();
    for (int k = 0; k < 13; k++) {
        struct fake f;
        fake_init(&f, 10, 0);
        fake_add(&f, "i", "i", 10, 0, src_nulls(0, 10), src_bits, src_i32);
        fake_add(&f, "g", "g", 10, 2, 0, NULL, src_f64);
        switch (k) {
        case 0: f.kids[1].n_buffers = 3; break;
        case 1: f.kids[0].n_buffers = 1; break;
        case 2: f.array.n_children = 1; break;            /* schema says 2 */
        case 3: f.kids[1].length = 9; break;              /* shorter than the struct */
        case 4: f.kid_bufs[1][1] = NULL; break;           /* no values */
        case 5: f.kid_bufs[0][0] = NULL; break;           /* nulls, but no bitmap */
        case 6: f.kids[0].offset = -1; break;
        case 7: f.array.length = -3; break;
        case 8: f.array.n_buffers = 2; break;
        case 9: f.kids[0].null_count = 11; break;         /* more nulls than rows */
        case 10: f.kid_ptrs[1] = NULL; break;
        case 11: f.skids[0].format = NULL; break;
        case 12: f.array.offset = 1; break;               /* children too short now */
        }
        expect_rejected(&f, SL_EFORMAT, NULL);
    }
}

SL_TEST(released_or_null_input)
{
    src_init();
    struct fake f;
    fake_init(&f, 4, 0);
    fake_add(&f, "i", "i", 4, 0, 0, NULL, src_i32);
    sl_batch_t *b;
    struct ArrowArray released = f.array;
    released.release = NULL;
    assert_int_equal(sl_batch_import_arrow(&released, &f.schema, &b), SL_EINVAL);
    struct ArrowSchema released_s = f.schema;
    released_s.release = NULL;
    assert_int_equal(sl_batch_import_arrow(&f.array, &released_s, &b), SL_EINVAL);
    assert_int_equal(sl_batch_import_arrow(NULL, &f.schema, &b), SL_EINVAL);
    assert_int_equal(sl_batch_import_arrow(&f.array, NULL, &b), SL_EINVAL);
    assert_int_equal(sl_batch_import_arrow(&f.array, &f.schema, NULL), SL_EINVAL);
    assert_int_equal(sl_batch_export_arrow(NULL, &released, &released_s), SL_EINVAL);
    sl_table_t *t;
    assert_int_equal(sl_table_import_stream(NULL, &t), SL_EINVAL);
    struct ArrowArrayStream dead = {0};
    assert_int_equal(sl_table_import_stream(&dead, &t), SL_EINVAL);
    release_unmoved(&f);
    assert_no_leaks();
}

/* ---------------- allocation failures ---------------- */

SL_TEST(import_allocation_failures)
{
    src_init();
    int failures = 0;
    for (int64_t n = 0;; n++) {
        struct fake f;
        fake_init(&f, 16, 2);
        fake_add(&f, "i", "i", 18, 1, -1, src_bits, src_i32);
        fake_add(&f, "l", "l", 18, 0, 0, NULL, src_i64);
        fake_add(&f, "g", "g", 18, 5, -1, src_bits, src_f64);
        sl_batch_t *b;
        sl__mem_fail_after(n);
        int rc = sl_batch_import_arrow(&f.array, &f.schema, &b);
        sl__mem_fail_after(-1);
        if (rc == SL_OK) {
            assert_int_equal(f.array_releases, 0);
            expect_column(b, 2, src_f64, 8, src_bits, 7);
            sl_batch_unref(b);
            assert_int_equal(f.array_releases, 1);
            assert_int_equal(f.schema_releases, 1);
            break;
        }
        failures++;
        assert_int_equal(rc, SL_ENOMEM);
        assert_null(b);
        assert_int_equal(live_allocs(), 0);
        release_unmoved(&f);
        assert_true(n < 100);
    }
    assert_true(failures >= 5); /* holder, batch, schema, names, buffers */
    assert_no_leaks();
}

SL_TEST(export_allocation_failures)
{
    sl_batch_t *b = make_batch(33, 4);
    int64_t base = live_allocs();
    int failures = 0;
    for (int64_t n = 0;; n++) {
        struct ArrowArray arr;
        struct ArrowSchema sch;
        sl__mem_fail_after(n);
        int rc = sl_batch_export_arrow(b, &arr, &sch);
        sl__mem_fail_after(-1);
        if (rc == SL_OK) {
            sl_batch_t *r;
            SL_ASSERT_OK(sl_batch_import_arrow(&arr, &sch, &r));
            assert_batches_equal(b, r);
            sl_batch_unref(r);
            break;
        }
        failures++;
        assert_int_equal(rc, SL_ENOMEM);
        assert_null(arr.release);
        assert_null(sch.release);
        assert_int_equal(live_allocs(), base);
        assert_true(n < 100);
    }
    assert_true(failures >= 5 + 4); /* 1 + 4 array allocations, 1 + 4 schema ones */
    assert_int_equal(live_allocs(), base);
    sl_batch_unref(b);
    assert_no_leaks();
}

/* ---------------- streams ---------------- */

static sl_table_t *make_table(void)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (int i = 0; i < 3; i++) {
        sl_batch_t *b = make_batch(40 + i, i);
        if (i == 1) { /* a sliced batch, so offsets travel through the stream */
            sl_batch_t *s = sl__batch_slice(b, 9, 21);
            sl_batch_unref(b);
            b = s;
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

static void assert_tables_equal(const sl_table_t *a, const sl_table_t *b)
{
    assert_int_equal(sl_table_num_batches(a), sl_table_num_batches(b));
    assert_int_equal(sl_table_num_rows(a), sl_table_num_rows(b));
    for (int64_t i = 0; i < sl_table_num_batches(a); i++)
        assert_batches_equal(sl_table_batch(a, i), sl_table_batch(b, i));
}

SL_TEST(stream_roundtrip)
{
    sl_table_t *t = make_table();
    struct ArrowArrayStream st;
    SL_ASSERT_OK(sl_table_export_stream(t, &st));
    sl_table_t *r;
    SL_ASSERT_OK(sl_table_import_stream(&st, &r));
    assert_null(st.release);
    assert_tables_equal(t, r);
    sl_table_unref(t);
    sl_table_unref(r);
    assert_no_leaks();
}

SL_TEST(stream_protocol)
{
    sl_table_t *t = make_table();
    struct ArrowArrayStream st;
    SL_ASSERT_OK(sl_table_export_stream(t, &st));
    sl_table_unref(t); /* the stream holds its own reference */
    struct ArrowSchema sch;
    assert_int_equal(st.get_schema(&st, &sch), 0);
    assert_string_equal(sch.format, "+s");
    assert_int_equal(sch.n_children, 4);
    assert_string_equal(sch.children[3]->name, "d");
    int64_t rows = 0;
    int n = 0;
    for (;;) {
        struct ArrowArray a;
        assert_int_equal(st.get_next(&st, &a), 0);
        if (!a.release)
            break;
        rows += a.length;
        n++;
        if (n == 2)
            assert_int_equal(a.children[0]->offset, 9);
        a.release(&a);
    }
    assert_int_equal(n, 3);
    assert_int_equal(rows, 40 + 21 + 42);
    struct ArrowArray a;
    assert_int_equal(st.get_next(&st, &a), 0); /* still the end */
    assert_null(a.release);
    sch.release(&sch);
    assert_int_equal(st.get_schema(&st, &sch), 0); /* works after the end, too */
    assert_int_equal(sch.n_children, 4);
    sch.release(&sch);
    assert_null(st.get_last_error(&st));
    st.release(&st);
    assert_null(st.release);
    assert_no_leaks();
}

SL_TEST(stream_empty_table)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    struct ArrowArrayStream st;
    SL_ASSERT_OK(sl_table_export_stream(t, &st));
    sl_table_t *r;
    SL_ASSERT_OK(sl_table_import_stream(&st, &r));
    assert_int_equal(sl_table_num_batches(r), 0);
    assert_int_equal(sl_table_num_rows(r), 0);
    sl_table_unref(t);
    sl_table_unref(r);
    assert_no_leaks();
}

/* A foreign stream: yields `good` copies of a fake array, then fails or ends. */
struct fake_stream {
    int releases;
    int next_calls;
    int good;
    int fail_errno;       /* 0: end normally */
    const char *fail_format; /* child format in the schema */
    struct fake arrays[3];
};

static int fs_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    struct fake_stream *p = s->private_data;
    struct fake tmp;
    fake_init(&tmp, 0, 0);
    fake_add(&tmp, "i", p->fail_format ? p->fail_format : "i", 0, 0, 0, NULL, NULL);
    /* A self-contained schema: static child storage, no parent bookkeeping. */
    static struct ArrowSchema child;
    static struct ArrowSchema *children[1];
    child = tmp.skids[0];
    children[0] = &child;
    *out = (struct ArrowSchema){.format = "+s", .name = "", .n_children = 1,
                                .children = children, .release = fake_field_release};
    return 0;
}

static int fs_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    struct fake_stream *p = s->private_data;
    int k = p->next_calls++;
    if (k < p->good) {
        struct fake *f = &p->arrays[k];
        fake_init(f, 5, 0);
        fake_add(f, "i", "i", 5, k, 0, NULL, src_i32);
        *out = f->array;
        return 0;
    }
    if (p->fail_errno)
        return p->fail_errno;
    out->release = NULL;
    return 0;
}

static const char *fs_get_last_error(struct ArrowArrayStream *s)
{
    return "disk on fire";
}

static void fs_release(struct ArrowArrayStream *s)
{
    struct fake_stream *p = s->private_data;
    p->releases++;
    s->release = NULL;
}

static struct ArrowArrayStream fake_stream_init(struct fake_stream *p, int good, int err)
{
    memset(p, 0, sizeof *p);
    p->good = good;
    p->fail_errno = err;
    return (struct ArrowArrayStream){fs_get_schema, fs_get_next, fs_get_last_error, fs_release,
                                     p};
}

SL_TEST(stream_import_foreign)
{
    src_init();
    struct fake_stream p;
    struct ArrowArrayStream st = fake_stream_init(&p, 3, 0);
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_import_stream(&st, &t));
    assert_int_equal(p.releases, 1);
    assert_int_equal(sl_table_num_batches(t), 3);
    assert_int_equal(sl_table_num_rows(t), 15);
    expect_column(sl_table_batch(t, 2), 0, src_i32, 4, NULL, 2);
    assert_int_equal(p.arrays[2].array_releases, 0);
    sl_table_unref(t);
    for (int k = 0; k < 3; k++)
        assert_int_equal(p.arrays[k].array_releases, 1);
    assert_no_leaks();
}

SL_TEST(stream_import_errors)
{
    src_init();
    struct fake_stream p;
    struct ArrowArrayStream st = fake_stream_init(&p, 1, EIO);
    sl_table_t *t = (sl_table_t *)1;
    assert_int_equal(sl_table_import_stream(&st, &t), SL_EIO);
    assert_null(t);
    assert_non_null(strstr(sl_last_errmsg(), "disk on fire"));
    assert_int_equal(p.releases, 0); /* on failure the caller keeps the stream */
    assert_int_equal(p.arrays[0].array_releases, 1); /* the pulled batch was dropped */
    st.release(&st);

    st = fake_stream_init(&p, 2, 0);
    p.fail_format = "z";
    assert_int_equal(sl_table_import_stream(&st, &t), SL_EUNSUPPORTED);
    assert_int_equal(p.next_calls, 0);
    assert_int_equal(p.releases, 0);
    st.release(&st);
    assert_no_leaks();
}

SL_TEST(stream_allocation_failures)
{
    sl_table_t *t = make_table();
    int64_t base = live_allocs();
    int failures = 0;
    for (int64_t n = 0;; n++) {
        struct ArrowArrayStream st;
        sl__mem_fail_after(n);
        int rc = sl_table_export_stream(t, &st);
        sl_table_t *r = NULL;
        if (rc == SL_OK) {
            rc = sl_table_import_stream(&st, &r);
            if (rc != SL_OK) {
                assert_non_null(st.release);
                st.release(&st);
            }
        }
        sl__mem_fail_after(-1);
        if (rc == SL_OK) {
            assert_tables_equal(t, r);
            sl_table_unref(r);
            break;
        }
        failures++;
        /* A producer's ENOMEM (get_schema, get_next) is SL_ENOMEM too, not an I/O error. */
        if (rc != SL_ENOMEM)
            fail_msg("n=%lld: %s: %s", (long long)n, sl_err_name(rc), sl_last_errmsg());
        assert_int_equal(live_allocs(), base);
        assert_true(n < 1000);
    }
    assert_true(failures > 20);
    sl_table_unref(t);
    assert_no_leaks();
}

/* ---------------- device arrays ---------------- */

SL_TEST(device_cpu_roundtrip)
{
    sl_batch_t *b = make_batch(50, 5);
    sl_batch_t *s = sl__batch_slice(b, 3, 40);
    struct ArrowDeviceArray da;
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_device_arrow(s, &da, &sch));
    assert_int_equal(da.device_type, ARROW_DEVICE_CPU);
    assert_int_equal(da.device_id, -1);
    assert_null(da.sync_event);
    assert_int_equal(da.array.length, 40);
    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_import_device_arrow(&da, &sch, &r));
    assert_null(da.array.release);
    assert_null(sch.release);
    assert_batches_equal(s, r);
    sl_batch_unref(r);

    /* Pinned host memory imports like plain host memory. */
    SL_ASSERT_OK(sl_batch_export_device_arrow(s, &da, &sch));
    da.device_type = ARROW_DEVICE_CUDA_HOST;
    da.device_id = 0;
    SL_ASSERT_OK(sl_batch_import_device_arrow(&da, &sch, &r));
    assert_batches_equal(s, r);
    sl_batch_unref(r);
    sl_batch_unref(s);
    sl_batch_unref(b);
    assert_no_leaks();
}

SL_TEST(device_unsupported)
{
    sl_batch_t *b = make_batch(10, 6);
    struct ArrowDeviceArray da;
    struct ArrowSchema sch;
    sl_batch_t *r;
    SL_ASSERT_OK(sl_batch_export_device_arrow(b, &da, &sch));
    da.device_type = ARROW_DEVICE_OPENCL;
    assert_int_equal(sl_batch_import_device_arrow(&da, &sch, &r), SL_EUNSUPPORTED);
    assert_non_null(da.array.release);
#ifndef SL_HAVE_CUDA
    int event = 0; /* stands for a cudaEvent_t this build cannot wait on */
    da.device_type = ARROW_DEVICE_CUDA;
    da.device_id = 0;
    assert_int_equal(sl_batch_import_device_arrow(&da, &sch, &r), SL_EUNSUPPORTED);
    assert_non_null(strstr(sl_last_errmsg(), "CUDA"));
    da.device_type = ARROW_DEVICE_CUDA_HOST;
    da.sync_event = &event;
    assert_int_equal(sl_batch_import_device_arrow(&da, &sch, &r), SL_EUNSUPPORTED);
#endif
    assert_non_null(da.array.release);
    assert_non_null(sch.release);
    da.array.release(&da.array);
    sch.release(&sch);
    sl_batch_unref(b);
    assert_no_leaks();
}

/* Marks every buffer of b as living on GPU `gpu` (the bytes stay in host memory; no
 * test reads them through the device path). */
static void pretend_on_gpu(sl_batch_t *b, int col, int gpu)
{
    b->cols[col].data->kind = SL__MEM_DEVICE;
    b->cols[col].data->device = gpu;
    if (b->cols[col].validity) {
        b->cols[col].validity->kind = SL__MEM_DEVICE;
        b->cols[col].validity->device = gpu;
    }
}

SL_TEST(device_export_gpu_batch)
{
    sl_batch_t *b = make_batch(10, 7);
    for (int i = 0; i < 4; i++)
        pretend_on_gpu(b, i, 1);
    struct ArrowArray arr;
    struct ArrowSchema sch;
    assert_int_equal(sl_batch_export_arrow(b, &arr, &sch), SL_EUNSUPPORTED);
    assert_null(arr.release);
    assert_null(sch.release);
    struct ArrowDeviceArray da;
    SL_ASSERT_OK(sl_batch_export_device_arrow(b, &da, &sch));
    assert_int_equal(da.device_type, ARROW_DEVICE_CUDA);
    assert_int_equal(da.device_id, 1);
    assert_null(da.sync_event);
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(b, 2, &c));
    assert_ptr_equal(da.array.children[2]->buffers[1], c.data);
    da.array.release(&da.array);
    sch.release(&sch);

    pretend_on_gpu(b, 3, 0); /* two GPUs */
    assert_int_equal(sl_batch_export_device_arrow(b, &da, &sch), SL_EUNSUPPORTED);
    assert_null(da.array.release);
    b->cols[3].data->kind = SL__MEM_HOST; /* host and GPU mixed */
    b->cols[3].data->device = -1;
    assert_int_equal(sl_batch_export_device_arrow(b, &da, &sch), SL_EUNSUPPORTED);
    sl_batch_unref(b);
    assert_no_leaks();
}

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "../../gpu/gpu_test.h" /* GPU_MISSING: a failure where a GPU is expected */
#endif

/* A real CUDA array: imported zero-copy as device-resident, after its event. Always
 * defined (meson registers every SL_TEST it finds); skipped without CUDA. */
SL_TEST(device_cuda_import)
{
#ifndef SL_HAVE_CUDA
    SL_SKIP("built without CUDA");
#else
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0)
        GPU_MISSING("no CUDA device");
    src_init();
    void *d_vals = NULL;
    assert_int_equal(cudaMalloc(&d_vals, sizeof src_i64), cudaSuccess);
    assert_int_equal(cudaMemcpy(d_vals, src_i64, sizeof src_i64, cudaMemcpyHostToDevice),
                     cudaSuccess);
    cudaEvent_t ev;
    assert_int_equal(cudaEventCreate(&ev), cudaSuccess);
    assert_int_equal(cudaEventRecord(ev, 0), cudaSuccess);
    struct fake f;
    fake_init(&f, 20, 0);
    fake_add(&f, "l", "l", 20, 4, 0, NULL, d_vals);
    struct ArrowDeviceArray da = {.array = f.array, .device_id = 0,
                                  .device_type = ARROW_DEVICE_CUDA, .sync_event = &ev};
    f.array.release = NULL; /* moved into da */
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_import_device_arrow(&da, &f.schema, &b));
    assert_null(da.array.release);
    assert_int_equal(b->cols[0].data->kind, SL__MEM_DEVICE);
    assert_int_equal(b->cols[0].data->device, 0);
    assert_ptr_equal(b->cols[0].data->ptr, d_vals);
    assert_int_equal(b->cols[0].offset, 4);

    struct ArrowArray arr;
    struct ArrowSchema sch;
    assert_int_equal(sl_batch_export_arrow(b, &arr, &sch), SL_EUNSUPPORTED);
    struct ArrowDeviceArray out;
    SL_ASSERT_OK(sl_batch_export_device_arrow(b, &out, &sch));
    assert_int_equal(out.device_type, ARROW_DEVICE_CUDA);
    assert_int_equal(out.device_id, 0);
    const struct ArrowArray *c = out.array.children[0];
    int64_t host[20];
    assert_int_equal(cudaMemcpy(host, (const int64_t *)c->buffers[1] + c->offset, sizeof host,
                                cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(host, src_i64 + 4, sizeof host);
    out.array.release(&out.array);
    sch.release(&sch);
    sl_batch_unref(b);
    assert_int_equal(f.array_releases, 1);
    cudaFree(d_vals);
    cudaEventDestroy(ev);
    assert_no_leaks();
#endif /* SL_HAVE_CUDA */
}
