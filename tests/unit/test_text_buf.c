/* Tests the growing text buffer of the engine's JSON (runtime/text_buf.c): long and many
 * appends equal the same text written with one printf, and a failed allocation leaves no
 * text and no leak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_test.h"
#include "text_buf.h"

/* The reference: the same appends into a buffer known to be large enough. */
static void ref_put(char *ref, size_t *len, const char *name, int i)
{
    *len += (size_t)sprintf(ref + *len, "%s\"%s\":%d", i ? "," : "", name, i);
}

SL_TEST(appends_equal_one_printf)
{
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    size_t cap = 40000 * 320, len = 0;
    char *ref = malloc(cap);
    assert_non_null(ref);
    ref[0] = 0;
    struct sl__text_buf b = {0};
    for (int i = 0; i < 40000; i++) {
        /* names of every length from 0 to 299 bytes: the buffer grows many times, and by
         * more than it holds at once early on */
        const char *nm = name + sizeof name - 1 - (size_t)(i % 300);
        sl__text_put(&b, "%s\"%s\":%d", i ? "," : "", nm, i);
        ref_put(ref, &len, nm, i);
    }
    assert_false(b.oom);
    assert_int_equal(b.len, len);
    char *s = sl__text_take(&b);
    assert_non_null(s);
    assert_string_equal(s, ref);
    assert_null(b.s); /* taken: the buffer is empty again */
    sl__free(s, 0);
    free(ref);
}

SL_TEST(empty_text_and_one_append)
{
    struct sl__text_buf b = {0};
    assert_null(sl__text_take(&b)); /* nothing appended: no text */
    sl__text_put(&b, "%s", "");
    char *s = sl__text_take(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    sl__free(s, 0);
}

SL_TEST(failed_allocation_gives_no_text)
{
    for (int64_t k = 0; k < 4; k++) {
        struct sl__mem_counters before, after;
        sl__mem_counters(&before);
        struct sl__text_buf b = {0};
        sl__mem_fail_after(k); /* the k-th growth fails */
        for (int i = 0; i < 2000; i++)
            sl__text_put(&b, "{\"value\":%d}", i);
        sl__mem_fail_after(-1);
        assert_true(b.oom);
        assert_null(sl__text_take(&b));
        sl__mem_counters(&after);
        assert_int_equal(after.live_allocs, before.live_allocs); /* nothing leaked */
    }
}
