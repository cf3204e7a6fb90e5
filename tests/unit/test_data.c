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
