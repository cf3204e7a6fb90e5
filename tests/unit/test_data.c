/* Tests batches and tables: creation, views, slices, reference counting, schema checks,
 * and that every allocation is freed. */
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(batch_create_and_view)
{
    const char *names[] = {"k", "v"};
    enum sl_type types[] = {SL_TYPE_INT32, SL_TYPE_FLOAT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 2, names, types, 1000));
    int32_t *k = sl_batch_column_data(b, 0);
    double *v = sl_batch_column_data(b, 1);
    assert_non_null(k);
    assert_true(((uintptr_t)k % 64) == 0);
    for (int i = 0; i < 1000; i++) {
        k[i] = i;
        v[i] = i * 0.5;
    }
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(b, 1, &c));
    assert_int_equal(c.type, SL_TYPE_FLOAT64);
    assert_int_equal(c.length, 1000);
    assert_string_equal(c.name, "v");
    assert_true(((const double *)c.data)[999] == 499.5);
    assert_int_equal(sl_batch_column_index(b, "k"), 0);
    assert_int_equal(sl_batch_column_index(b, "x"), SL_ENOTFOUND);
    assert_int_equal(sl_batch_column(b, 2, &c), SL_EINVAL);
    sl_batch_unref(b);
    assert_no_leaks();
}

SL_TEST(batch_bad_arguments)
{
    const char *names[] = {"k"};
    enum sl_type bad[] = {SL_TYPE_INVALID};
    sl_batch_t *b = (sl_batch_t *)1;
    assert_int_equal(sl_batch_create(&b, 1, names, bad, 10), SL_EINVAL);
    assert_null(b);
    enum sl_type ok[] = {SL_TYPE_INT64};
    assert_int_equal(sl_batch_create(&b, 1, names, ok, -1), SL_EINVAL);
    assert_no_leaks();
}

SL_TEST(slice_shares_buffers)
{
    const char *names[] = {"k"};
    enum sl_type types[] = {SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 100));
    int64_t *k = sl_batch_column_data(b, 0);
    for (int i = 0; i < 100; i++)
        k[i] = i * 10;
    sl_batch_t *s = sl__batch_slice(b, 30, 5);
    assert_null(sl_batch_column_data(s, 0)); /* shared with b: not writable */
    sl_batch_unref(b);                       /* the slice keeps the buffer alive */
    assert_int_equal(sl_batch_num_rows(s), 5);
    const int64_t *sv = sl__col_values(s, 0);
    assert_int_equal(sv[0], 300);
    assert_int_equal(sv[4], 340);
    sl_batch_unref(s);
    assert_no_leaks();
}

/* Dictionaries agree (sl__dict_same: what lets the GPU join compare codes) when they are
 * one object or hold the same strings in the same order; another order, another string
 * or another count does not; sharing moves the reference. */
SL_TEST(dictionaries_same_by_content)
{
    const char *names[] = {"a", "b", "c", "d"};
    enum sl_type types[] = {SL_TYPE_DICT, SL_TYPE_DICT, SL_TYPE_DICT, SL_TYPE_DICT};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 4, names, types, 2));
    const int32_t offs[] = {0, 3, 5, 5}, offs_swapped[] = {0, 2, 5, 5};
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, 3, offs, "abcde"));
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 1, 3, offs, "abcde"));
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 2, 3, offs_swapped, "deabc"));
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 3, 2, offs, "abcde"));
    struct sl__dict *d[4];
    for (int i = 0; i < 4; i++)
        d[i] = b->cols[i].dict;
    assert_true(d[0] != d[1]);
    assert_true(sl__dict_same(d[0], d[0]));
    assert_true(sl__dict_same(d[0], d[1]));  /* copies of one dictionary */
    assert_false(sl__dict_same(d[0], d[2])); /* the same strings in another order */
    assert_false(sl__dict_same(d[0], d[3])); /* a prefix */
    assert_false(sl__dict_same(d[0], NULL));
    sl__batch_share_dict(b, 1, d[0]);
    assert_true(b->cols[1].dict == d[0]);
    sl_batch_unref(b);
    assert_no_leaks();
}

SL_TEST(validity_bitmap)
{
    const char *names[] = {"k"};
    enum sl_type types[] = {SL_TYPE_INT32};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 20));
    uint8_t *bits = sl_batch_column_validity(b, 0);
    assert_non_null(bits);
    bits[1] &= (uint8_t) ~(1u << 2); /* row 10 null */
    assert_false(sl__col_valid(&b->cols[0], 10));
    assert_true(sl__col_valid(&b->cols[0], 9));
    sl_batch_unref(b);
    assert_no_leaks();
}

SL_TEST(table_append_checks_schema)
{
    const char *n1[] = {"k"}, *n2[] = {"j"};
    enum sl_type types[] = {SL_TYPE_INT32};
    sl_batch_t *a, *b;
    sl_table_t *t;
    SL_ASSERT_OK(sl_batch_create(&a, 1, n1, types, 3));
    SL_ASSERT_OK(sl_batch_create(&b, 1, n2, types, 4));
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, a));
    SL_ASSERT_OK(sl_table_append(t, a));
    assert_int_equal(sl_table_append(t, b), SL_ETYPE);
    assert_int_equal(sl_table_num_rows(t), 6);
    assert_int_equal(sl_table_num_batches(t), 2);
    assert_ptr_equal(sl_table_batch(t, 1), a);
    assert_null(sl_table_batch(t, 2));
    sl_batch_unref(a);
    sl_batch_unref(b);
    sl_table_unref(t);
    assert_no_leaks();
}

SL_TEST(injected_allocation_failure)
{
    const char *names[] = {"k"};
    enum sl_type types[] = {SL_TYPE_INT32};
    for (int n = 0; n < 6; n++) {
        sl_batch_t *b = NULL;
        sl__mem_fail_after(n);
        int rc = sl_batch_create(&b, 1, names, types, 10);
        sl__mem_fail_after(-1);
        if (rc == SL_OK)
            sl_batch_unref(b);
        else
            assert_int_equal(rc, SL_ENOMEM);
        assert_no_leaks();
    }
}

#include <numa.h>
#include <numaif.h>

SL_TEST(numa_arena_places_memory_on_the_node)
{
    const char *name = sl__mem_allocator();
    printf("allocator: %s\n", name);
    if (strncmp(name, "jemalloc", 8) != 0)
        SL_SKIP("libc allocator in this build (sanitizer or jemalloc unavailable)");
    assert_non_null(strstr(name, "NUMA arena"));
    int nodes = numa_available() >= 0 ? numa_max_node() + 1 : 1;
    for (int n = 0; n < nodes; n++) {
        sl__mem_set_node(n);
        size_t bytes = 8 << 20; /* a fresh extent, so the node hook runs */
        char *p = sl__malloc(bytes);
        assert_non_null(p);
        memset(p, 1, bytes);
        int where = -1;
        if (get_mempolicy(&where, NULL, 0, p + bytes / 2, MPOL_F_NODE | MPOL_F_ADDR) == 0)
            assert_int_equal(where, n);
        sl__free(p, bytes);
    }
    sl__mem_set_node(-1);
    assert_no_leaks();
}

SL_TEST(big_blocks_are_reused_then_trimmed)
{
    /* Freed big blocks are kept for the next allocation of their size class (so queries
     * do not fault their memory in again); trim gives them back. Not in sanitizer
     * builds, where every reuse must be visible to AddressSanitizer. */
    size_t n = (size_t)3 << 20;
    char *a = sl__malloc(n);
    assert_non_null(a);
    memset(a, 7, n);
    sl__free(a, n);
    char *b = sl__malloc(n - 1000); /* same class: (2.5 MiB, 3 MiB] rounds up to 3 MiB */
    assert_non_null(b);
    memset(b, 8, n - 1000);
    bool cached = sl__mem_cached_bytes() == 0 && a == b;
#if defined(__SANITIZE_ADDRESS__)
    cached = true;
#endif
    assert_true(cached);
    sl__free(b, n);
    assert_no_leaks(); /* cached blocks are not live allocations */
    sl__mem_trim();
    assert_int_equal(sl__mem_cached_bytes(), 0);
}

/* Batch j of the combine test: int64 with nulls, utf8 (nulls, empty strings), large_utf8,
 * and a DICT column with a dictionary of its own (other strings, another order). */
static sl_batch_t *combine_batch(int j, int64_t n)
{
    const char *names[] = {"k", "s", "ls", "d"};
    enum sl_type types[] = {SL_TYPE_INT64, SL_TYPE_UTF8, SL_TYPE_LARGE_UTF8, SL_TYPE_DICT};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 4, names, types, n));
    int64_t *k = sl_batch_column_data(b, 0);
    uint8_t *kv = sl_batch_column_validity(b, 0), *sv = sl_batch_column_validity(b, 1);
    int32_t *so = sl_batch_column_data(b, 1), *dc = sl_batch_column_data(b, 3);
    int64_t *lo = sl_batch_column_data(b, 2);
    char *sc = sl_batch_column_chars(b, 1, n * 8 + 1), *lc = sl_batch_column_chars(b, 2, n * 8 + 1);
    int32_t at = 0;
    for (int64_t r = 0; r < n; r++) {
        k[r] = r * 31 + j;
        if ((r + j) % 7 == 0)
            kv[r >> 3] &= (uint8_t) ~(1u << (r & 7));
        if ((r + j) % 5 == 0)
            sv[r >> 3] &= (uint8_t) ~(1u << (r & 7));
        int len = (int)((r * 3 + j) % 8); /* 0..7 bytes: empty strings too */
        for (int i = 0; i < len; i++)
            sc[at + i] = lc[at + i] = (char)('a' + (r + i + j) % 26);
        at += len;
        so[r + 1] = at;
        lo[r + 1] = at;
        dc[r] = (int32_t)((r + j) % 3);
    }
    char chars[32];
    int32_t offs[4] = {0};
    int m = snprintf(chars, sizeof chars, "x%d", j % 4);
    offs[1] = m;
    m += snprintf(chars + m, sizeof chars - (size_t)m, j % 2 ? "yy" : "z");
    offs[2] = m;
    m += snprintf(chars + m, sizeof chars - (size_t)m, j % 2 ? "z" : "yy");
    offs[3] = m;
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 3, 3, offs, chars));
    return b;
}

/* Every value of the rows of batches bs[0..n) equals, as text, the same row of t. */
static void assert_same_values(sl_batch_t *const *bs, int64_t n, const sl_table_t *t)
{
    int64_t tb = 0, tr = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t r = 0; r < sl_batch_num_rows(bs[i]); r++) {
            while (tr == sl_batch_num_rows(sl_table_batch(t, tb)))
                tb++, tr = 0;
            const sl_batch_t *b = sl_table_batch(t, tb);
            for (int c = 0; c < 4; c++) {
                char want[64], got[64];
                int wn = 0, gn = 0;
                sl_batch_value_format(bs[i], c, r, want, sizeof want, &wn);
                sl_batch_value_format(b, c, tr, got, sizeof got, &gn);
                if (wn != gn || strcmp(want, got))
                    fail_msg("batch %lld row %lld column %d: '%s'%s became '%s'%s", (long long)i,
                             (long long)r, c, want, wn ? " (null)" : "", got, gn ? " (null)" : "");
            }
            tr++;
        }
}

/* sl_table_pin first combines runs of small batches into batches of up to a limit
 * (sl__table_combine_runs), each DICT column with one dictionary for the whole table: the
 * same rows, values, nulls, strings and dictionary strings, whatever each batch's
 * dictionary, with empty batches, one-row batches and
 * a slice at an offset among them. Without a GPU the pin itself fails; the table is
 * combined and usable. */
SL_TEST(pin_combines_small_batches)
{
    static const int64_t sizes[] = {1000, 0, 1, 777, 3000, 1000, 64, 1999};
    enum { N = sizeof sizes / sizeof sizes[0] };
    sl_batch_t *bs[N];
    sl_table_t *t, *t2;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_create(&t2));
    for (int j = 0; j < N; j++) {
        bs[j] = combine_batch(j, sizes[j] + (j == 6 ? 13 : 0));
        if (j == 6) { /* a slice of rows [13, 77): values and bitmaps at an offset */
            sl_batch_t *s = sl__batch_slice(bs[j], 13, sizes[j]);
            sl_batch_unref(bs[j]);
            bs[j] = s;
        }
        SL_ASSERT_OK(sl_table_append(t, bs[j]));
        SL_ASSERT_OK(sl_table_append(t2, bs[j]));
    }
    SL_ASSERT_OK(sl__table_combine_runs(t, 1500, 2500));
#ifdef SL_HAVE_CUDA
    /* runs of batches under 1500 rows: 1000+0+1+777 | 3000 (large: alone) | 1000+64 |
     * 1999 (large: alone) */
    assert_int_equal(sl_table_num_batches(t), 4);
    for (int64_t i = 1; i < 4; i++) /* one dictionary for the whole table */
        assert_true(sl__dict_same(sl_table_batch(t, 0)->cols[3].dict,
                                  sl_table_batch(t, i)->cols[3].dict));
#endif
    assert_int_equal(sl_table_num_rows(t), sl_table_num_rows(t2));
    assert_same_values(bs, N, t);
    int rc = sl_table_pin(t2);
    assert_true(rc == SL_OK || rc == SL_EUNSUPPORTED);
#ifdef SL_HAVE_CUDA
    assert_int_equal(sl_table_num_batches(t2), 1);
#endif
    assert_same_values(bs, N, t2);
    for (int j = 0; j < N; j++)
        sl_batch_unref(bs[j]);
    sl_table_unref(t);
    sl_table_unref(t2);
    assert_no_leaks();
}
