/* Tests the narrow copies of table columns (runtime/narrow.c): the width chosen from the
 * values' range for every wide width, negative values, the extremes of each type, a range
 * that does not narrow, empty and one-value columns, exact round trips against the
 * values, and the copies a buffer keeps (shared, bounded, freed with it). */
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* Plans, encodes and decodes n values of `wide` bytes; checks the width and step and that
 * the values come back bit for bit. */
static void round_trip_step(const void *values, int wide, int64_t n, int want_width,
                            uint64_t want_step)
{
    int64_t base = 12345;
    uint64_t step = 77;
    int width = sl__narrow_plan(values, wide, n, &base, &step);
    if (width != want_width || (width && step != want_step))
        fail_msg("wide %d, %lld values: width %d step %llu, want %d and %llu", wide,
                 (long long)n, width, (unsigned long long)step, want_width,
                 (unsigned long long)want_step);
    if (width == 0) {
        assert_true(base == 0 && step == 1);
        return;
    }
    uint8_t *narrow = malloc((size_t)(n * width + 1));
    uint8_t *back = malloc((size_t)(n * wide + 1));
    assert_non_null(narrow);
    assert_non_null(back);
    sl__narrow_encode(values, wide, n, base, step, width, narrow);
    sl__narrow_decode(narrow, width, n, base, step, wide, back);
    assert_memory_equal(values, back, (size_t)(n * wide));
    free(narrow);
    free(back);
}

static void round_trip(const void *values, int wide, int64_t n, int want_width)
{
    round_trip_step(values, wide, n, want_width, 1);
}

SL_TEST(narrow_widths_of_int64)
{
    int64_t v[300];
    /* a range of 255 fits a byte, whatever the base (negative, near the extremes) */
    const int64_t bases[] = {0, -128, -1000000007, INT64_MIN, INT64_MAX - 255, 1ll << 40};
    for (size_t k = 0; k < sizeof bases / sizeof bases[0]; k++) {
        for (int i = 0; i < 300; i++)
            v[i] = bases[k] + (i * 37) % 256;
        round_trip(v, 8, 300, 1);
    }
    for (int i = 0; i < 300; i++) /* 256 apart, and one value between: two bytes */
        v[i] = -5 + (i % 2) * 256;
    v[2] = -4;
    round_trip(v, 8, 300, 2);
    for (int i = 0; i < 300; i++) /* the largest two-byte range, negative */
        v[i] = -70000 + (i % 2) * 65535;
    v[4] = -69999;
    round_trip(v, 8, 300, 2);
    v[7] = -70000 + 65536; /* one more: three bytes */
    round_trip(v, 8, 300, 3);
    v[9] = -70000 + (1 << 24) - 1; /* the largest three-byte range */
    round_trip(v, 8, 300, 3);
    v[9] = -70000 + (1 << 24); /* one more: four */
    round_trip(v, 8, 300, 4);
    for (int i = 0; i < 300; i++) /* the largest four-byte range, across zero */
        v[i] = (i % 3 == 0) ? -(1ll << 31) : (i % 3 == 1) ? (1ll << 32) - 1 - (1ll << 31) : 0;
    round_trip(v, 8, 300, 4);
    v[5] = (1ll << 32) - (1ll << 31); /* 2^32 apart: does not narrow */
    round_trip(v, 8, 300, 0);
    v[0] = INT64_MIN, v[1] = INT64_MAX; /* the whole range: does not narrow */
    round_trip(v, 8, 300, 0);
    assert_no_leaks();
}

/* Values a common step apart narrow by the step: l_quantity (1.00 .. 50.00 as 100 ..
 * 5000) in a byte, steps past four bytes' range, negative values; one value off the step
 * and the step is 1 again. */
SL_TEST(narrow_common_step)
{
    int64_t v[200];
    for (int i = 0; i < 200; i++)
        v[i] = 100 + (i * 7 % 50) * 100;
    round_trip_step(v, 8, 200, 1, 100);
    v[11] = 4999; /* off the step: 4900 apart, two bytes */
    round_trip_step(v, 8, 200, 2, 1);
    for (int i = 0; i < 200; i++) /* 2^40 apart, below zero: a byte of steps */
        v[i] = -(1ll << 50) + (int64_t)(i % 200) * (1ll << 40);
    round_trip_step(v, 8, 200, 1, 1ull << 40);
    for (int i = 0; i < 200; i++) /* a step that wraps: INT64_MIN and INT64_MAX - 1 ... */
        v[i] = i % 2 ? INT64_MIN : INT64_MAX - 1; /* 2^64 - 2 apart: one step */
    round_trip_step(v, 8, 200, 1, UINT64_MAX - 1);
    int32_t d[100];
    for (int i = 0; i < 100; i++) /* weekly dates */
        d[i] = 8035 + (i * 13 % 100) * 7;
    round_trip_step(d, 4, 100, 1, 7);
    assert_no_leaks();
}

SL_TEST(narrow_widths_of_int32_and_int16)
{
    int32_t v[100];
    for (int i = 0; i < 100; i++) /* dates of a few months */
        v[i] = 8035 + i * 3 % 200;
    round_trip(v, 4, 100, 1);
    for (int i = 0; i < 100; i++) /* dates of 1992..1998: two bytes */
        v[i] = 8035 + (i * 2477) % 2526;
    round_trip(v, 4, 100, 2);
    for (int i = 0; i < 100; i++) /* the extremes of int32 */
        v[i] = i % 2 ? INT32_MAX : INT32_MAX - 65535;
    v[6] = INT32_MAX - 1;
    round_trip(v, 4, 100, 2);
    v[8] = INT32_MAX - 65536; /* three bytes */
    round_trip(v, 4, 100, 3);
    v[3] = INT32_MIN; /* the whole range: four bytes, no narrower */
    round_trip(v, 4, 100, 0);
    for (int i = 0; i < 100; i++) /* negative, a byte's range */
        v[i] = -300 + i;
    round_trip(v, 4, 100, 1);
    int16_t h[50];
    for (int i = 0; i < 50; i++)
        h[i] = (int16_t)(INT16_MIN + i * 5 + (i == 3));
    round_trip(h, 2, 50, 1);
    h[9] = INT16_MAX; /* two bytes: no narrower */
    round_trip(h, 2, 50, 0);
    assert_no_leaks();
}

SL_TEST(narrow_empty_one_and_constant)
{
    int64_t v[5] = {-42, -42, -42, -42, -42};
    round_trip(v, 8, 0, 0); /* empty: nothing to narrow */
    round_trip(v, 8, 1, 1); /* one value: a byte of zeros */
    round_trip(v, 8, 5, 1);
    int64_t base;
    uint64_t step;
    assert_int_equal(sl__narrow_plan(v, 3, 5, &base, &step), 0); /* no such width */
    assert_no_leaks();
}

/* Which column types get copies: integers of 16 bits and more, dates, timestamps,
 * 64-bit decimals, DICT codes; not floats, bools, 8-bit integers, strings or 128-bit
 * decimals. */
SL_TEST(narrow_types)
{
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_INT64), 8);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_UINT64), 8);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_TIMESTAMP), 8);
    assert_int_equal(sl__narrow_wide_width(sl_type_decimal(15, 2)), 8);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_INT32), 4);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_DATE32), 4);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_DICT), 4);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_UINT16), 2);
    assert_int_equal(sl__narrow_wide_width(sl_type_decimal(38, 2)), 0);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_FLOAT64), 0);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_FLOAT32), 0);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_BOOL), 0);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_INT8), 0);
    assert_int_equal(sl__narrow_wide_width(SL_TYPE_UTF8), 0);
}

/* Unsigned values compare as their signed bits: a range across 2^63 still narrows and
 * comes back exactly. */
SL_TEST(narrow_unsigned_bits)
{
    uint64_t v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (1ull << 63) - 32 + (uint64_t)i; /* INT64_MAX - 31 .. INT64_MIN + 31 */
    /* as signed: both ends of int64, a range of 2^64 - 64: does not narrow */
    round_trip(v, 8, 64, 0);
    for (int i = 0; i < 64; i++)
        v[i] = UINT64_MAX - (uint64_t)i; /* -1 .. -64 as signed */
    round_trip(v, 8, 64, 1);
    assert_no_leaks();
}

/* A buffer's copy: of the rows asked (an offset, not the whole buffer), found only for
 * ranges it holds and the width it was made for, shared by a second column on the
 * buffer, freed with the buffer. */
SL_TEST(narrow_buffer_copy)
{
    struct sl__buf *b = sl__buf_new(1000 * 8);
    assert_non_null(b);
    int64_t *v = b->ptr;
    for (int i = 0; i < 1000; i++) /* rows [100, 900) span 3,000; the rest much more */
        v[i] = (i >= 100 && i < 900) ? -1000000 + (i * 7919) % 3001 : (int64_t)i << 40;
    struct sl__narrow *nw = NULL;
    SL_ASSERT_OK(sl__buf_narrow(b, 8, 100, 800, &nw));
    assert_non_null(nw);
    assert_ptr_equal(b->narrow, nw);
    assert_int_equal(nw->width, 2);
    assert_int_equal(nw->wide, 8);
    assert_int_equal(nw->first, 100);
    assert_int_equal(nw->n, 800);
    int64_t back[800];
    sl__narrow_decode(nw->buf->ptr, nw->width, 800, nw->base, nw->step, 8, back);
    assert_memory_equal(back, v + 100, sizeof back);
    assert_ptr_equal(sl__narrow_of(b, 8, 100, 800), nw);
    assert_ptr_equal(sl__narrow_of(b, 8, 500, 400), nw);  /* a slice inside */
    assert_ptr_equal(sl__narrow_of(b, 8, 900, 0), nw);    /* nothing, at the end */
    assert_null(sl__narrow_of(b, 8, 99, 10));             /* starts before */
    assert_null(sl__narrow_of(b, 8, 850, 51));            /* ends after */
    assert_null(sl__narrow_of(b, 4, 100, 10));            /* another width */
    struct sl__narrow *again = NULL;
    SL_ASSERT_OK(sl__buf_narrow(b, 8, 100, 800, &again)); /* a second column on it */
    assert_ptr_equal(again, nw);
    sl__buf_unref(b); /* frees the copy too */

    /* a range that does not narrow, one past the buffer, an empty one: no copy */
    b = sl__buf_new(16 * 8);
    assert_non_null(b);
    v = b->ptr;
    for (int i = 0; i < 16; i++) /* both extremes, steps of no common divisor between */
        v[i] = i == 0 ? INT64_MIN : i == 1 ? INT64_MAX : (int64_t)((uint64_t)i * 0x9e3779b97f4a7c15ull);
    SL_ASSERT_OK(sl__buf_narrow(b, 8, 0, 16, &nw));
    assert_null(nw);
    SL_ASSERT_OK(sl__buf_narrow(b, 8, 10, 7, &nw));
    assert_null(nw);
    SL_ASSERT_OK(sl__buf_narrow(b, 8, 0, 0, &nw));
    assert_null(nw);
    assert_null(b->narrow);
    assert_null(sl__narrow_of(b, 8, 0, 1));
    sl__buf_unref(b);
    assert_no_leaks();
}

/* Out of memory: SL_ENOMEM, no copy, nothing leaked. */
SL_TEST(narrow_out_of_memory)
{
    struct sl__buf *b = sl__buf_new(64 * 4);
    assert_non_null(b);
    for (int i = 0; i < 64; i++)
        ((int32_t *)b->ptr)[i] = i;
    struct sl__narrow *nw = NULL;
    for (int k = 0; k < 2; k++) {
        sl__mem_fail_after(k);
        assert_int_equal(sl__buf_narrow(b, 4, 0, 64, &nw), SL_ENOMEM);
        sl__mem_fail_after(-1);
        assert_null(nw);
        assert_null(b->narrow);
    }
    SL_ASSERT_OK(sl__buf_narrow(b, 4, 0, 64, &nw));
    assert_non_null(nw);
    sl__buf_unref(b);
    assert_no_leaks();
}

/* sl__table_narrow (what sl_table_pin runs, on several threads): every batch's columns
 * that narrow get copies of their rows (a slice's rows at its offset), a buffer two
 * columns share gets one, floats and strings none; the copies decode to the values. */
SL_TEST(narrow_table_columns)
{
    const char *names[] = {"k", "d", "f", "s"};
    enum sl_type types[] = {SL_TYPE_INT64, SL_TYPE_DATE32, SL_TYPE_FLOAT64, SL_TYPE_UTF8};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (int k = 0; k < 5; k++) {
        int64_t n = k == 2 ? 0 : 1000 * (k + 1);
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 4, names, types, n + 7));
        int64_t *key = sl_batch_column_data(b, 0);
        int32_t *d = sl_batch_column_data(b, 1);
        double *f = sl_batch_column_data(b, 2);
        for (int64_t i = 0; i < n + 7; i++) {
            key[i] = i < 7 ? INT64_MIN : -(int64_t)k * 100000 + i * (k == 4 ? 50 : 1);
            d[i] = 9000 + (int32_t)(i % 300);
            f[i] = (double)i;
        }
        sl_batch_t *s = sl__batch_slice(b, 7, n); /* rows past the first 7 (INT64_MIN) */
        sl_batch_unref(b);
        if (k != 3) {
            SL_ASSERT_OK(sl_table_append(t, s));
        } else { /* column d a second view of k's buffer, in a table of its own */
            sl__buf_unref(s->cols[1].data);
            s->cols[1].data = s->cols[0].data;
            s->cols[1].type = SL_TYPE_INT64;
            sl__buf_ref(s->cols[0].data);
            SL_ASSERT_OK(sl__schema_set(s->schema, 1, "d", SL_TYPE_INT64));
            sl_table_t *t3;
            SL_ASSERT_OK(sl_table_create(&t3));
            SL_ASSERT_OK(sl_table_append(t3, s));
            SL_ASSERT_OK(sl__table_narrow(t3));
            const struct sl__narrow *nw = s->cols[0].data->narrow;
            assert_non_null(nw);
            assert_ptr_equal(s->cols[1].data->narrow, nw);
            assert_int_equal(nw->width, 2); /* 4000 values a step apart */
            sl_table_unref(t3);
        }
        sl_batch_unref(s);
    }
    SL_ASSERT_OK(sl__table_narrow(t));
    for (int64_t i = 0; i < sl_table_num_batches(t); i++) {
        sl_batch_t *b = sl_table_batch(t, i);
        int64_t n = b->n_rows;
        const struct sl__narrow *nk = b->cols[0].data->narrow, *nd = b->cols[1].data->narrow;
        assert_null(b->cols[2].data->narrow);
        assert_null(b->cols[3].data->narrow);
        if (n == 0) {
            assert_null(nk);
            assert_null(nd);
            continue;
        }
        assert_non_null(nk);
        assert_non_null(nd);
        assert_int_equal(nk->first, 7);
        assert_int_equal(nk->n, n);
        /* the last batch's 5000 keys 50 apart: two bytes of steps of 50; the others'
         * ranges (1000 and 2000 values) two: INT64_MIN is only in the 7 rows before the
         * slice */
        assert_int_equal(nk->width, 2);
        assert_int_equal(nk->step, i == 3 ? 50 : 1);
        assert_int_equal(nd->width, 2);
        int64_t *back = malloc((size_t)n * 8);
        sl__narrow_decode(nk->buf->ptr, nk->width, n, nk->base, nk->step, 8, back);
        assert_memory_equal(back, sl__col_values(b, 0), (size_t)n * 8);
        sl__narrow_decode(nd->buf->ptr, nd->width, n, nd->base, nd->step, 4, back);
        assert_memory_equal(back, sl__col_values(b, 1), (size_t)n * 4);
        free(back);
    }
    SL_ASSERT_OK(sl__table_narrow(t)); /* again: the copies are kept, nothing new */
    sl_table_unref(t);
    assert_no_leaks();
}

/* A whole column's copy names the same column's buffer in the table's next batch (an
 * upload sends that one ahead), when that one has a copy too: not past the last batch,
 * not to a batch whose column does not narrow, not for slices. */
SL_TEST(narrow_next_batch)
{
    const char *names[] = {"k", "v"};
    enum sl_type types[] = {SL_TYPE_INT64, SL_TYPE_INT32};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    sl_batch_t *bs[4];
    for (int k = 0; k < 4; k++) {
        SL_ASSERT_OK(sl_batch_create(&bs[k], 2, names, types, 100));
        int64_t *key = sl_batch_column_data(bs[k], 0);
        int32_t *v = sl_batch_column_data(bs[k], 1);
        for (int i = 0; i < 100; i++) {
            key[i] = k * 1000 + i;
            v[i] = k == 2 && i == 5 ? INT32_MIN : i; /* batch 2's v does not narrow */
        }
        SL_ASSERT_OK(sl_table_append(t, bs[k]));
    }
    SL_ASSERT_OK(sl__table_narrow(t));
    for (int k = 0; k < 4; k++) {
        const struct sl__narrow *nk = bs[k]->cols[0].data->narrow;
        const struct sl__narrow *nv = bs[k]->cols[1].data->narrow;
        assert_non_null(nk);
        assert_ptr_equal(nk->next, k < 3 ? bs[k + 1]->cols[0].data : NULL);
        if (k == 2) {
            assert_null(nv);
            continue;
        }
        assert_non_null(nv);
        assert_ptr_equal(nv->next, k == 0 ? bs[1]->cols[1].data : NULL);
    }
    for (int k = 0; k < 4; k++)
        sl_batch_unref(bs[k]);
    sl_table_unref(t); /* the chain of references goes with the batches */
    assert_no_leaks();
}
