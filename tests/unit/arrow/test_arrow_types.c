/* Tests the Arrow interfaces on the converted and string types from C, with allocation
 * failures injected at every allocation of an export and of an import (bool bits,
 * decimal widening and narrowing, utf8 offsets and bytes, dictionaries): each failure
 * is SL_ENOMEM, leaves nothing moved or leaked, and the first run that gets through
 * round-trips every value. Also: a sliced batch (odd offset) exports its rows. */
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static int64_t live_allocs(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    return c.live_allocs;
}

/* bool, decimal(15,2), utf8 and dict columns of n rows, every third row null. */
static sl_batch_t *typed_batch(int64_t n)
{
    const char *names[] = {"b", "dec", "s", "k"};
    enum sl_type types[] = {SL_TYPE_BOOL, sl_type_decimal(15, 2), SL_TYPE_UTF8, SL_TYPE_DICT};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 4, names, types, n));
    uint8_t *bv = sl_batch_column_data(b, 0);
    int64_t *dv = sl_batch_column_data(b, 1);
    int32_t *so = sl_batch_column_data(b, 2), *kv = sl_batch_column_data(b, 3);
    char *chars = sl_batch_column_chars(b, 2, 3 * n + 1);
    for (int64_t i = 0; i < n; i++) {
        bv[i] = i % 2;
        dv[i] = (i - n / 2) * 12345;
        memcpy(chars + so[i], "abc", (size_t)(i % 4));
        so[i + 1] = so[i] + (int32_t)(i % 4);
        kv[i] = (int32_t)(i % 3);
    }
    static const int32_t off[] = {0, 3, 3, 8};
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 3, 3, off, "AIR" "" "TRUCK"));
    for (int c = 0; c < 4; c++) {
        uint8_t *valid = sl_batch_column_validity(b, c);
        for (int64_t i = 0; i < n; i += 3)
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
    return b;
}

static void assert_same_values(sl_batch_t *a, sl_batch_t *b)
{
    assert_int_equal(sl_batch_num_rows(a), sl_batch_num_rows(b));
    for (int c = 0; c < 4; c++) {
        for (int64_t i = 0; i < sl_batch_num_rows(a); i++) {
            char x[64], y[64];
            int nx, ny;
            sl_batch_value_format(a, c, i, x, sizeof x, &nx);
            sl_batch_value_format(b, c, i, y, sizeof y, &ny);
            if (nx != ny || strcmp(x, y) != 0)
                fail_msg("column %d row %lld: \"%s\"%s vs \"%s\"%s", c, (long long)i, x,
                         nx ? " (null)" : "", y, ny ? " (null)" : "");
        }
    }
}

SL_TEST(typed_export_and_import_allocation_failures)
{
    sl_batch_t *src = typed_batch(45);
    sl_batch_t *b = sl__batch_slice(src, 3, 37); /* odd offset: bits and offsets shift */
    sl_batch_unref(src);
    int64_t base = live_allocs();
    int failures = 0;
    for (int64_t n = 0;; n++) {
        struct ArrowArray arr;
        struct ArrowSchema sch;
        sl__mem_fail_after(n);
        int rc = sl_batch_export_arrow(b, &arr, &sch);
        sl__mem_fail_after(-1);
        if (rc != SL_OK) {
            failures++;
            assert_int_equal(rc, SL_ENOMEM);
            assert_null(arr.release);
            assert_null(sch.release);
            assert_int_equal(live_allocs(), base);
            assert_true(n < 200);
            continue;
        }
        /* Now every allocation of the import fails in turn. */
        for (int64_t m = 0;; m++) {
            sl_batch_t *r = NULL;
            sl__mem_fail_after(m);
            rc = sl_batch_import_arrow(&arr, &sch, &r);
            sl__mem_fail_after(-1);
            if (rc == SL_OK) {
                assert_same_values(b, r);
                sl_batch_unref(r);
                break;
            }
            assert_int_equal(rc, SL_ENOMEM);
            assert_null(r);
            assert_non_null(arr.release); /* nothing moved */
            assert_true(m < 200);
        }
        break;
    }
    assert_true(failures >= 8);
    assert_int_equal(live_allocs(), base);
    sl_batch_unref(b);
    assert_int_equal(live_allocs(), 0);
}
